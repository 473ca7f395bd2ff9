package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/verify"
)

// runVerify implements "sframe-gen verify [--json] [-v] FILE": the .sframe
// section checked against the file's CFI at every address and against the
// rules of its strictest consumers (docs/verify.md); for a static archive,
// of each member generate gives one. Exit status 0 when clean, 1 when any
// problem was found, 2 when the file (or a member) cannot be checked.
func (c *cli) runVerify(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen verify", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	help := helpFlag(fs)
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	verbose := fs.BoolP("verbose", "v", false, "also list the functions the CFI describes and the section does not cover")
	source := cfiSourceFlags(fs, "compare with")
	budget := c.memoryLimitFlag(fs, readMemoryUsage)
	setUsage(fs, c.stdout, "sframe-gen verify [--json] [-v] FILE...",
		"Check the .sframe section of FILE against its call-frame information at every\n"+
			"address, and against the rules of the Linux kernel, libsframe and GNU ld.\n"+
			"A static archive is checked member by member, each named ARCHIVE(MEMBER).\n"+
			"Exit status: 0 clean, 1 problems found, 2 FILE cannot be checked.")
	if code, done := c.parseFiles(fs, args, help, "verify"); done {
		return code
	}
	var opt verify.Options
	var err error
	if opt.Source, err = source(); err != nil {
		return c.fail("", commandUsage("verify", err.Error()))
	}
	b, err := budget()
	if err != nil {
		return c.fail("", commandUsage("verify", err.Error()))
	}
	var problems, unchecked bool
	for _, file := range fs.Args() {
		err = readInputs(file, "no member has a .sframe section", b, func(in elfInput) bool {
			switch c.verifyInput(in, opt, *asJSON, *verbose) {
			case verifySkipped:
				return false
			case verifyProblems:
				problems = true
			case verifyUnchecked:
				unchecked = true
			}
			return true
		})
		if err != nil {
			c.fail(file, err)
			unchecked = true
		}
	}
	switch {
	case problems:
		return exitFailure
	case unchecked:
		return exitUsage
	}
	return exitOK
}

// verifyOutcome is what verify made of one input.
type verifyOutcome int

const (
	verifyClean     verifyOutcome = iota
	verifyProblems                // problems found
	verifyUnchecked               // the input cannot be checked
	verifySkipped                 // an archive member generate leaves as it is
)

// verifyInput checks in and prints its report, or why it cannot be
// checked.
func (c *cli) verifyInput(in elfInput, opt verify.Options, asJSON, verbose bool) verifyOutcome {
	if in.err != nil {
		c.fail(in.name, in.err)
		return verifyUnchecked
	}
	if err := chargeVerify(in, opt.Source); err != nil {
		c.fail(in.name, err)
		return verifyUnchecked
	}
	rep, err := verify.File(in.f, opt)
	switch {
	case in.member && errors.Is(err, emit.ErrNoSFrame) && !sframegen.Generates(in.f):
		return verifySkipped
	case errors.Is(err, cfi.ErrNoCFI):
		fmt.Fprintf(c.stderr, "sframe-gen: %s: cannot be checked: %s has no %s to check its .sframe against\n", in.name, in.name, cfiName(opt.Source))
		return verifyUnchecked
	case err != nil:
		c.fail(in.name, err)
		return verifyUnchecked
	}
	if err := c.writeVerify(in, rep, asJSON, verbose); err != nil {
		c.fail(in.name, err)
		return verifyUnchecked
	}
	if len(rep.Problems) > 0 {
		return verifyProblems
	}
	return verifyClean
}

// chargeVerify charges what checking in takes: its .sframe section read
// and decoded, its CFI read and evaluated, its symbol table (the names of
// the report).
func chargeVerify(in elfInput, src cfi.Source) error {
	if err := in.meter.ChargeSFrame(in.f, in.size); err != nil {
		return err
	}
	if err := in.meter.ChargeCFI(in.f, src); err != nil {
		return err
	}
	return in.meter.ChargeNames(in.f, in.size)
}

// writeVerify prints the report of in.
func (c *cli) writeVerify(in elfInput, rep *verify.Report, asJSON, verbose bool) error {
	names := newVerifyNames(in.f)
	w := bufio.NewWriter(c.stdout)
	var err error
	if asJSON {
		err = writeVerifyJSON(w, in.name, rep, names)
	} else {
		writeVerifyText(w, in.name, rep, names, verbose)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// cfiName names the call-frame information src reads.
func cfiName(src cfi.Source) string {
	switch src {
	case cfi.EHFrame:
		return ".eh_frame"
	case cfi.DebugFrame:
		return ".debug_frame"
	}
	return "CFI"
}

// verifyNames names functions in reports: the demangled symbol at the
// function's start, else the section and offset ("function at .plt+0x10")
// (target.Symbols.Name).
type verifyNames struct {
	syms *target.Symbols
}

func newVerifyNames(f *elf.File) *verifyNames {
	return &verifyNames{syms: target.NewSymbols(f)}
}

func (n *verifyNames) name(section int, start uint64) string { return n.syms.Name(section, start) }

// where is the "FUNCTION@0xADDR" of a finding, "" for section-wide ones.
func (n *verifyNames) where(fd *verify.Finding) string {
	if !fd.InFunction {
		return ""
	}
	return fmt.Sprintf("%s@%#x", n.name(fd.Section, fd.Func), fd.Addr)
}

func writeVerifyText(w io.Writer, file string, rep *verify.Report, names *verifyNames, verbose bool) {
	line := func(prefix string, fd *verify.Finding) {
		if at := names.where(fd); at != "" {
			fmt.Fprintf(w, "sframe-gen: %s: %s%s: %s\n", displayName(file), prefix, at, fd.String())
		} else {
			fmt.Fprintf(w, "sframe-gen: %s: %s%s\n", displayName(file), prefix, fd.String())
		}
	}
	for i := range rep.Problems {
		line("", &rep.Problems[i])
	}
	for i := range rep.Notes {
		line("note: ", &rep.Notes[i])
	}
	if verbose {
		for _, u := range rep.Uncovered {
			sig := ""
			if u.Signal {
				sig = " (signal frame)"
			}
			fmt.Fprintf(w, "sframe-gen: %s: %s: not covered by SFrame%s: CFI describes [%#x, %#x)\n",
				file, names.name(u.Section, u.Start), sig, u.Start, u.Start+u.Size)
		}
	}
	fmt.Fprintf(w, "sframe-gen: %s: %s\n", displayName(file), rep.Summary())
}

// plural is "1 thing" or "N things".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func writeVerifyJSON(w io.Writer, file string, rep *verify.Report, names *verifyNames) error {
	enc := json.NewEncoder(jsonWriter{w})
	enc.SetIndent("", "  ")
	return enc.Encode(rep.JSON(file, names.name))
}
