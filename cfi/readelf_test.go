package cfi

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// This file checks rows against GNU readelf --debug-dump=frames-interp.
//
// readelf's table differs from ours in ways the comparison allows for:
//   - it prints a row for every advance, also a zero one; the state of a
//     zero-length row is overwritten by the next row at the same LOC, so
//     only the last row of each LOC is compared;
//   - it prints a row at or past the FDE's end when the last advance lands
//     there; such a row covers no code and we do not yield it;
//   - "u" is both "undefined" and "no rule" (a column the FDE mentions
//     elsewhere);
//   - an FDE without instructions gets no table;
//   - the return address column is called "ra", whatever its number.

// readelfFDE is one FDE's table as readelf prints it.
type readelfFDE struct {
	offset, start, end uint64
	cols               []string
	rows               []readelfRow
}

type readelfRow struct {
	loc  uint64
	cfa  string
	vals []string
}

var (
	reFDE     = regexp.MustCompile(`^([0-9a-f]{8,16}) [0-9a-f]+ [0-9a-f]+ FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+)`)
	reCIE     = regexp.MustCompile(`^[0-9a-f]{8,16} [0-9a-f]+ [0-9a-f]+ CIE`)
	reRow     = regexp.MustCompile(`^([0-9a-f]{8,16}) (\S+) *(.*)$`)
	reSection = regexp.MustCompile(`^Contents of the (\S+) section:`)
)

// parseReadelf reads the frames-interp text of the section named section.
func parseReadelf(r io.Reader, section string) ([]*readelfFDE, error) {
	var fdes []*readelfFDE
	var cur *readelfFDE
	in := false
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := reSection.FindStringSubmatch(line); m != nil {
			in = m[1] == section || m[1] == ".z"+strings.TrimPrefix(section, ".")
			cur = nil
			continue
		}
		if !in {
			continue
		}
		if m := reFDE.FindStringSubmatch(line); m != nil {
			off, _ := strconv.ParseUint(m[1], 16, 64)
			s, _ := strconv.ParseUint(m[2], 16, 64)
			e, _ := strconv.ParseUint(m[3], 16, 64)
			cur = &readelfFDE{offset: off, start: s, end: e}
			fdes = append(fdes, cur)
			continue
		}
		if reCIE.MatchString(line) || strings.HasSuffix(line, "ZERO terminator") {
			cur = nil
			continue
		}
		if cur == nil {
			continue
		}
		if strings.HasPrefix(line, "   LOC") {
			f := strings.Fields(line)
			cur.cols = f[2:]
			continue
		}
		if m := reRow.FindStringSubmatch(line); m != nil && cur.cols != nil {
			loc, err := strconv.ParseUint(m[1], 16, 64)
			if err != nil {
				return nil, err
			}
			// Register rules print as "r9 (x9)": glue "(..)" to the
			// token before.
			var vals []string
			for _, t := range strings.Fields(m[3]) {
				if strings.HasPrefix(t, "(") && len(vals) > 0 {
					continue
				}
				vals = append(vals, t)
			}
			if len(vals) != len(cur.cols) {
				return nil, fmt.Errorf("FDE %#x: row %q has %d values for %d columns", cur.offset, line, len(vals), len(cur.cols))
			}
			cur.rows = append(cur.rows, readelfRow{loc: loc, cfa: m[2], vals: vals})
		}
	}
	return fdes, sc.Err()
}

// regNames returns readelf's register names (regname(r, 1)) of machine.
func regNames(m elf.Machine) map[string]uint64 {
	names := map[string]uint64{}
	switch m {
	case elf.EM_X86_64:
		for i, n := range []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
			"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"} {
			names[n] = uint64(i)
		}
		for i := 0; i < 16; i++ {
			names[fmt.Sprintf("xmm%d", i)] = uint64(17 + i)
		}
		for i := 0; i < 8; i++ {
			names[fmt.Sprintf("st%d", i)] = uint64(33 + i)
			names[fmt.Sprintf("mm%d", i)] = uint64(41 + i)
		}
		names["rflags"] = 49
		for i, n := range []string{"es", "cs", "ss", "ds", "fs", "gs"} {
			names[n] = uint64(50 + i)
		}
		names["fs.base"], names["gs.base"] = 58, 59
		names["tr"], names["ldtr"], names["mxcsr"], names["fcw"], names["fsw"] = 62, 63, 64, 65, 66
		for i := 16; i < 32; i++ {
			names[fmt.Sprintf("xmm%d", i)] = uint64(67 + i - 16)
		}
		for i := 0; i < 8; i++ {
			names[fmt.Sprintf("k%d", i)] = uint64(118 + i)
		}
	case elf.EM_386:
		for i, n := range []string{"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "eip", "eflags"} {
			names[n] = uint64(i)
		}
	case elf.EM_AARCH64:
		for i := 0; i < 31; i++ {
			names[fmt.Sprintf("x%d", i)] = uint64(i)
		}
		names["sp"] = 31
		names["elr"] = 33
		names["vg"] = 46
		for i := 0; i < 32; i++ {
			names[fmt.Sprintf("v%d", i)] = uint64(64 + i)
		}
	case elf.EM_S390:
		for i := 0; i < 16; i++ {
			names[fmt.Sprintf("r%d", i)] = uint64(i)
		}
		for i, f := range []int{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15} {
			names[fmt.Sprintf("f%d", f)] = uint64(16 + i)
		}
	}
	return names
}

// regNumber maps a readelf column or CFA register name to its number.
func regNumber(names map[string]uint64, n string, ra uint64) (uint64, error) {
	if n == "ra" {
		return ra, nil
	}
	if v, ok := names[n]; ok {
		return v, nil
	}
	if strings.HasPrefix(n, "r") {
		if v, err := strconv.ParseUint(n[1:], 10, 64); err == nil {
			return v, nil
		}
	}
	return 0, fmt.Errorf("unknown register name %q", n)
}

// compareWithReadelf compares the rows of every FDE of frames with
// readelf's tables. It returns the number of rows compared.
func compareWithReadelf(t *testing.T, name string, f *elf.File, frames *Frames, want []*readelfFDE) int {
	t.Helper()
	names := regNames(f.Machine)
	byOff := map[uint64]*FDE{}
	for _, fde := range frames.FDEs {
		byOff[fde.Offset] = fde
	}
	if len(want) != len(frames.FDEs) {
		t.Errorf("%s: readelf shows %d FDEs, we read %d (errors: %v)", name, len(want), len(frames.FDEs), frames.Errors)
	}
	var it RowIterator
	compared := 0
	fails := 0
	for _, w := range want {
		fde := byOff[w.offset]
		if fde == nil {
			t.Errorf("%s: FDE at %#x missing", name, w.offset)
			continue
		}
		if fde.Start != w.start || fde.End() != w.end {
			t.Errorf("%s: FDE %#x: pc %#x..%#x, readelf %#x..%#x", name, w.offset, fde.Start, fde.End(), w.start, w.end)
		}
		// Keep the last row of each LOC, and drop rows past the end.
		var rows []readelfRow
		for i, r := range w.rows {
			if i+1 < len(w.rows) && w.rows[i+1].loc == r.loc {
				continue
			}
			if r.loc >= w.end && len(rows) > 0 {
				continue
			}
			rows = append(rows, r)
		}
		it.Reset(frames, fde)
		n := 0
		for {
			row, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !expectedError(name, err) {
					t.Errorf("%s: %v", name, err)
				}
				n = len(rows)
				break
			}
			if len(w.rows) == 0 {
				n++
				continue
			}
			if n >= len(rows) {
				t.Errorf("%s: FDE %#x: extra row at %#x", name, w.offset, row.PC)
				n++
				continue
			}
			if msg := diffRow(names, fde.CIE.RAColumn, w.cols, rows[n], row); msg != "" {
				if fails < 20 {
					t.Errorf("%s: FDE %#x: row %#x: %s", name, w.offset, row.PC, msg)
				}
				fails++
			}
			n++
			compared++
		}
		if len(w.rows) == 0 {
			if n != 1 {
				t.Errorf("%s: FDE %#x: %d rows for an FDE readelf shows no table for", name, w.offset, n)
			}
		} else if n < len(rows) {
			t.Errorf("%s: FDE %#x: %d rows, readelf %d", name, w.offset, n, len(rows))
		}
	}
	return compared
}

// expectedErrors are the entry errors that golden inputs are meant to have,
// by input file name suffix and message (none at present: the broken-entry
// cases are hand-made in read_test.go, rows_test.go and reloc_test.go).
var expectedErrors = map[string]string{}

func expectedError(name string, err error) bool {
	for suffix, msg := range expectedErrors {
		if strings.HasSuffix(name, suffix) && strings.Contains(err.Error(), msg) {
			return true
		}
	}
	return false
}

// diffRow compares one readelf row with ours; "" when they agree.
func diffRow(names map[string]uint64, ra uint64, cols []string, w readelfRow, row *Row) string {
	if w.loc != row.PC {
		return fmt.Sprintf("pc %#x, readelf %#x", row.PC, w.loc)
	}
	if w.cfa == "exp" {
		if !row.CFA.IsExpression() {
			return fmt.Sprintf("CFA r%d%+d, readelf exp", row.CFA.Reg, row.CFA.Offset)
		}
	} else {
		i := strings.LastIndexAny(w.cfa, "+-")
		if i < 0 {
			return fmt.Sprintf("cannot parse readelf CFA %q", w.cfa)
		}
		reg, err := regNumber(names, w.cfa[:i], ra)
		if err != nil {
			return err.Error()
		}
		off, err := strconv.ParseInt(w.cfa[i:], 10, 64)
		if err != nil {
			return err.Error()
		}
		if row.CFA.IsExpression() || row.CFA.Reg != reg || row.CFA.Offset != off {
			return fmt.Sprintf("CFA %+v, readelf %s", row.CFA, w.cfa)
		}
	}
	seen := 0
	for i, c := range cols {
		reg, err := regNumber(names, c, ra)
		if err != nil {
			return err.Error()
		}
		r := row.Rule(reg)
		if r.Kind != RuleUnset {
			seen++
		}
		v := w.vals[i]
		ok := false
		switch {
		case v == "u":
			ok = r.Kind == RuleUndefined || r.Kind == RuleUnset
		case v == "s":
			ok = r.Kind == RuleSameValue
		case v == "exp":
			ok = r.Kind == RuleExpression
		case v == "vexp":
			ok = r.Kind == RuleValExpression
		case v[0] == 'c' || v[0] == 'v':
			off, err := strconv.ParseInt(v[1:], 10, 64)
			kind := RuleOffset
			if v[0] == 'v' {
				kind = RuleValOffset
			}
			ok = err == nil && r.Kind == kind && r.Offset == off
		case v[0] == 'r':
			n, err := strconv.ParseUint(v[1:], 10, 64)
			ok = err == nil && r.Kind == RuleRegister && r.Reg == n
		default:
			return fmt.Sprintf("cannot parse readelf value %q", v)
		}
		if !ok {
			return fmt.Sprintf("column %s (r%d): %v %+v, readelf %s", c, reg, r.Kind, r, v)
		}
	}
	if seen != len(row.Regs) {
		return fmt.Sprintf("%d registers with rules, readelf shows %d of them", len(row.Regs), seen)
	}
	return ""
}

// readelfFrames runs readelf --debug-dump=frames-interp on path.
func readelfFrames(t *testing.T, path, section string) []*readelfFDE {
	t.Helper()
	readelf := sysfiles.GNURef.Tool(t, "x86_64", "readelf")
	out, err := exec.Command(readelf, "-W", "--debug-dump=frames-interp", path).Output()
	if err != nil {
		t.Fatalf("readelf %s: %v", path, err)
	}
	fdes, err := parseReadelf(strings.NewReader(string(out)), section)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return fdes
}

// checkFileAgainst reads path with src and compares it with readelf's
// table (from the golden text when golden is not "").
func checkFileAgainst(t *testing.T, path, golden string, src Source) int {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	frames, err := Read(f, src)
	if err != nil {
		if golden != "" {
			if st, _ := os.Stat(golden); st != nil && st.Size() == 0 {
				return 0 // no CFI at all, and readelf shows nothing
			}
		}
		t.Fatalf("%s: %v", path, err)
	}
	for _, e := range frames.Errors {
		t.Errorf("%s: %v", path, e)
	}
	checkDataAliases(t, frames)
	checkSections(t, f, frames)
	var want []*readelfFDE
	if golden != "" {
		g, err := os.Open(golden)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if want, err = parseReadelf(g, frames.Name); err != nil {
			t.Fatalf("%s: %v", golden, err)
		}
	} else {
		want = readelfFrames(t, path, frames.Name)
	}
	return compareWithReadelf(t, path, f, frames, want)
}

// TestGoldenFrames compares the rows of every golden input that has a
// readelf .frames file.
func TestGoldenFrames(t *testing.T) {
	var files []string
	for _, pat := range []string{"../testdata/gas/*/*.frames", "../testdata/link/*/*.frames", "../testdata/cc/*/*/*.frames", "../testdata/cc/*/*.frames"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no golden .frames files")
	}
	total := 0
	for _, golden := range files {
		base := strings.TrimSuffix(golden, ".frames")
		input := ""
		for _, cand := range []string{base + ".o", base, base + ".so", base + ".exe"} {
			if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() {
				input = cand
				break
			}
		}
		if input == "" {
			t.Errorf("%s: no input file beside it", golden)
			continue
		}
		t.Run(strings.TrimPrefix(base, "../testdata/"), func(t *testing.T) {
			total += checkFileAgainst(t, input, golden, Auto)
		})
	}
	t.Logf("%d files, %d rows compared", len(files), total)
}

// checkSections checks that every FDE of a relocatable object names an
// executable section and lies inside it.
func checkSections(t *testing.T, f *elf.File, frames *Frames) {
	t.Helper()
	if f.Type != elf.ET_REL {
		for _, fde := range frames.FDEs {
			if fde.Section != 0 {
				t.Fatalf("FDE %#x of a linked file names section %d", fde.Offset, fde.Section)
			}
		}
		return
	}
	for _, fde := range frames.FDEs {
		if fde.Section <= 0 || fde.Section >= len(f.Sections) {
			t.Errorf("FDE %#x: section index %d", fde.Offset, fde.Section)
			continue
		}
		s := f.Sections[fde.Section]
		if s.Flags&elf.SHF_EXECINSTR == 0 || fde.End() > s.Size {
			t.Errorf("FDE %#x: %#x..%#x not inside code section %s (size %#x)", fde.Offset, fde.Start, fde.End(), s.Name, s.Size)
		}
	}
}
