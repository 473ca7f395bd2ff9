package verify

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// String is the finding's message followed, when it concerns more than
// one address, by the addresses: " [0xADDR, 0xEND)", and ", N addresses"
// when a repeated (PCMASK) pattern makes them fewer than the interval.
// It is the text "sframe-gen verify" prints after the function's name.
func (fd *Finding) String() string {
	s := fd.Msg
	if fd.End > fd.Addr+1 || fd.Bytes > 1 {
		s += fmt.Sprintf(" [%#x, %#x)", fd.Addr, fd.End)
		if fd.Bytes != fd.End-fd.Addr {
			s += fmt.Sprintf(", %d addresses", fd.Bytes)
		}
	}
	return s
}

// Summary is the report's last line: functions checked, addresses
// covered, problems, notes, CFI functions not covered, signal frames not
// compared.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s checked, %s covered, %s", count(r.Functions, "function"), count(int(r.Addresses), "address"),
		count(len(r.Problems), "problem"))
	fmt.Fprintf(&b, " (%s; %d of %d CFI functions not covered by SFrame", count(len(r.Notes), "note"), len(r.Uncovered), r.CFIFunctions)
	if r.SignalNoFREs > 0 {
		fmt.Fprintf(&b, "; %s without FREs not compared", count(r.SignalNoFREs, "signal frame"))
	}
	b.WriteString(")")
	return b.String()
}

// count is "1 thing" or "N things" ("N addresses").
func count(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ReportJSON is a report in the form "sframe-gen verify --json" prints
// (docs/verify.md): the Report's fields, its findings with their
// functions named, and the summary line.
type ReportJSON struct {
	File         string         `json:"file"`
	OK           bool           `json:"ok"`
	ABI          string         `json:"abi"`
	Version      uint8          `json:"version"`
	Flags        string         `json:"flags"`
	Relocatable  bool           `json:"relocatable"`
	Functions    int            `json:"functions"`
	Addresses    uint64         `json:"addresses"`
	FREs         int            `json:"fres"`
	CFIFunctions int            `json:"cfi_functions"`
	SignalNoFREs int            `json:"signal_without_fres"`
	Problems     []FindingJSON  `json:"problems"`
	Notes        []FindingJSON  `json:"notes"`
	Uncovered    []FunctionJSON `json:"uncovered"`
	Summary      string         `json:"summary"`
}

// FindingJSON is a Finding in a ReportJSON: Function, Start, Addr and End
// are null for a finding about the whole section, FDE null when no FDE is
// concerned; Line is the finding's String.
type FindingJSON struct {
	Kind     string  `json:"kind"`
	Function *string `json:"function"`
	Section  int     `json:"section,omitempty"`
	Start    *uint64 `json:"start"`
	Addr     *uint64 `json:"addr"`
	End      *uint64 `json:"end"`
	Bytes    uint64  `json:"bytes,omitempty"`
	FDE      *int    `json:"fde"`
	Message  string  `json:"message"`
	Line     string  `json:"line"`
}

// FunctionJSON is a function of Report.Uncovered in a ReportJSON.
type FunctionJSON struct {
	Function string `json:"function"`
	Section  int    `json:"section,omitempty"`
	Start    uint64 `json:"start"`
	Size     uint64 `json:"size"`
	Signal   bool   `json:"signal"`
}

// JSON returns r in JSON form for the file named file, each function
// named by name (given its section index in a relocatable object, else 0,
// and its start).
func (r *Report) JSON(file string, name func(section int, start uint64) string) *ReportJSON {
	v := &ReportJSON{
		File: file, OK: len(r.Problems) == 0, ABI: r.ABI.String(), Version: r.Version,
		Flags: r.Flags.String(), Relocatable: r.Relocatable, Functions: r.Functions,
		Addresses: r.Addresses, FREs: r.FREs, CFIFunctions: r.CFIFunctions,
		SignalNoFREs: r.SignalNoFREs,
		Problems:     findingsJSON(r.Problems, name),
		Notes:        findingsJSON(r.Notes, name),
		Uncovered:    []FunctionJSON{},
		Summary:      r.Summary(),
	}
	for _, u := range r.Uncovered {
		v.Uncovered = append(v.Uncovered, FunctionJSON{name(u.Section, u.Start), u.Section, u.Start, u.Size, u.Signal})
	}
	return v
}

func findingsJSON(fds []Finding, name func(int, uint64) string) []FindingJSON {
	out := make([]FindingJSON, 0, len(fds))
	for i := range fds {
		fd := &fds[i]
		j := FindingJSON{Kind: string(fd.Kind), Message: fd.Msg, Line: fd.String()}
		if fd.InFunction {
			fn := name(fd.Section, fd.Func)
			start, addr, end := fd.Func, fd.Addr, fd.End
			j.Function, j.Section, j.Start, j.Addr, j.End, j.Bytes = &fn, fd.Section, &start, &addr, &end, fd.Bytes
		}
		if fd.FDE >= 0 {
			k := fd.FDE
			j.FDE = &k
		}
		out = append(out, j)
	}
	return out
}

// WriteText writes r as "sframe-gen verify" prints it: a line per
// problem, then per note ("note: "), each after the function and address
// it concerns (FUNCTION@0xADDR, the function named by name), with verbose
// a line per function the CFI describes and the section does not cover,
// then the summary. Every line starts with prefix ("sframe-gen: FILE: ").
// The error is w's.
func (r *Report) WriteText(w io.Writer, prefix string, name func(section int, start uint64) string, verbose bool) error {
	bw := bufio.NewWriter(w)
	line := func(kind string, fd *Finding) {
		if fd.InFunction {
			fmt.Fprintf(bw, "%s%s%s@%#x: %s\n", prefix, kind, name(fd.Section, fd.Func), fd.Addr, fd.String())
		} else {
			fmt.Fprintf(bw, "%s%s%s\n", prefix, kind, fd.String())
		}
	}
	for i := range r.Problems {
		line("", &r.Problems[i])
	}
	for i := range r.Notes {
		line("note: ", &r.Notes[i])
	}
	if verbose {
		for _, u := range r.Uncovered {
			sig := ""
			if u.Signal {
				sig = " (signal frame)"
			}
			fmt.Fprintf(bw, "%s%s: not covered by SFrame%s: CFI describes [%#x, %#x)\n",
				prefix, name(u.Section, u.Start), sig, u.Start, u.Start+u.Size)
		}
	}
	fmt.Fprintf(bw, "%s%s\n", prefix, r.Summary())
	return bw.Flush()
}
