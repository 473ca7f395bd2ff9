package main

import (
	"fmt"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// libsframeLookup builds testdata/libsframe/sframe-lookup.c with the C
// compiler against the static libsframe of the GNU reference prefix
// ($GNU_SFRAME_REF/../root) and returns the program's path. It skips the
// test when gcc or the prefix is missing, unless CI=true. (The static
// library: the prefix's shared one would bring the prefix's newer C
// library along, which the system's loader cannot run.)
func libsframeLookup(t *testing.T) string {
	t.Helper()
	gcc := sysfiles.NeedProgram(t, "gcc")
	root := filepath.Join(sysfiles.GNURef.Prefix(), "root")
	lib := prefixLib(root, "libsframe.a")
	inc := filepath.Join(root, "usr", "include")
	for _, p := range []string{lib, filepath.Join(inc, "sframe-api.h")} {
		if _, err := os.Stat(p); err != nil {
			sysfiles.NeedInput(t, "GNU libsframe missing: %v: %s", err, sysfiles.GNURef.Install)
		}
	}
	src := filepath.Join(testdataDir(), "libsframe")
	out := filepath.Join(t.TempDir(), "sframe-lookup")
	cmd := exec.Command(gcc, "-std=gnu11", "-O1", "-Wall", "-Werror",
		"-I", filepath.Join(src, "include"), "-I", inc,
		"-o", out, filepath.Join(src, "sframe-lookup.c"), lib)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building sframe-lookup: %v\n%s", err, b)
	}
	return out
}

// runLookup runs sframe-lookup on the section bytes data.
func runLookup(t *testing.T, prog string, data []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "section")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(prog, f).Output()
	if err != nil {
		t.Fatalf("sframe-lookup: %v\n%s", err, out)
	}
	return string(out)
}

// lookupText is what sframe-lookup prints for s, computed from our own
// decoding with libsframe's rules (sframe_find_fre's search, the offset
// accessors' choice of data words): the harness's output equals it when
// libsframe reads every function and FRE as emit.Decode does.
func lookupText(s *emit.Section) string {
	// One reader for all the lookups: gnuFindFRE makes one per lookup,
	// which decodes every function (libc's lookupText took minutes).
	r, err := emit.ReaderFor(s, 0)
	if err != nil {
		return lookupTextWith(s, gnuFindFRE)
	}
	return lookupTextWith(s, func(s *emit.Section, pc int64) *emit.FRE { return gnuFindFREIn(r, s, pc) })
}

// lookupTextWith is lookupText with find as sframe_find_fre.
func lookupTextWith(s *emit.Section, find func(*emit.Section, int64) *emit.FRE) string {
	var b strings.Builder
	h := &s.Header
	fmt.Fprintf(&b, "header version %d flags 0x%02x abi %d fixed_fp %d fixed_ra %d fdes %d\n",
		h.Version, uint8(h.Flags), uint8(h.ABI), h.CFAFixedFPOffset, h.CFAFixedRAOffset, s.NumFDEs())
	words := func(e *emit.FRE) string {
		var w strings.Builder
		w.WriteString(" words")
		for k := range e.Words {
			fmt.Fprintf(&w, " %x", e.UWord(k))
		}
		return w.String()
	}
	fdes, err := s.Functions()
	if err != nil {
		fmt.Fprintf(&b, "error %v\n", err)
	}
	for i := range fdes {
		f := &fdes[i]
		start := int64(s.FuncStart(i, 0))
		fmt.Fprintf(&b, "func %d start %d size %d fres %d info 0x%02x info2 0x%02x rep %d\n",
			i, start, f.Size, len(f.FREs), f.Info, f.Info2, f.RepSize)
		for j := range f.FREs {
			e := &f.FREs[j]
			fmt.Fprintf(&b, "fre %d %d start %d info 0x%02x%s\n", i, j, e.StartAddr, e.Info, words(e))
		}
		lookup := func(pc int64) {
			e := find(s, pc)
			if e == nil {
				fmt.Fprintf(&b, "find %d %d -> error -1\n", i, pc)
				return
			}
			fmt.Fprintf(&b, "find %d %d -> fre %d info 0x%02x%s\n", i, pc, e.StartAddr, e.Info, words(e))
			b.WriteString("  " + gnuAccessors(h, f.Type() == emit.FDEFlex, e) + "\n")
		}
		for j := range f.FREs {
			lo := f.FREs[j].StartAddr
			hi := f.Size
			if j+1 < len(f.FREs) {
				hi = f.FREs[j+1].StartAddr
			}
			if lo < f.Size {
				lookup(start + int64(lo))
			}
			if hi > lo+1 && lo+(hi-lo)/2 < f.Size {
				lookup(start + int64(lo+(hi-lo)/2))
			}
		}
		lookup(start - 1)
		lookup(start + int64(f.Size))
	}
	return b.String()
}

// gnuFindFRE is libsframe's sframe_find_fre on our decoding: emit.Reader's
// Find (the function by binary search over the index, then the last FRE
// starting at or before the offset, PCMASK functions modulo their repeat
// size), with libsframe's refusal of an index not flagged sorted. nil where
// libsframe returns an error.
func gnuFindFRE(s *emit.Section, pc int64) *emit.FRE {
	if s.NumFDEs() == 0 || s.Header.Flags&emit.FlagFDESorted == 0 {
		return nil // libsframe refuses to search an unsorted index
	}
	r, err := emit.ReaderFor(s, 0)
	if err != nil {
		return nil // (a section built by hand with malformed FRE data)
	}
	return gnuFindFREIn(r, s, pc)
}

// gnuFindFREIn is gnuFindFRE with r, the reader of s at address 0.
func gnuFindFREIn(r *emit.Reader, s *emit.Section, pc int64) *emit.FRE {
	if s.NumFDEs() == 0 || s.Header.Flags&emit.FlagFDESorted == 0 {
		return nil // libsframe refuses to search an unsorted index
	}
	i, j, ok := r.Find(uint64(pc))
	if !ok {
		return nil
	}
	f, err := s.FDE(i)
	if err != nil {
		return nil
	}
	return &f.FREs[j]
}

// gnuAccessors is what libsframe's accessors return for FRE e of a
// function of the given FDE type: sframe_fre_get_base_reg_id,
// _cfa_offset, _ra_offset, _fp_offset, _ra_mangled_p, _ra_undefined_p.
func gnuAccessors(h *emit.Header, flex bool, e *emit.FRE) string {
	word := func(k int) (int32, bool) {
		if k >= len(e.Words) {
			return 0, false
		}
		return e.Words[k], true
	}
	show := func(v int32, ok bool) string {
		if !ok {
			return "-"
		}
		return fmt.Sprint(v)
	}
	undefined := e.RAUndefined()
	cfaIdx := 0
	if flex {
		cfaIdx = 1
	}
	cfa, cfaOK := word(cfaIdx)
	if cfaOK && h.ABI == emit.ABIS390XBigEndian {
		cfa = emit.S390XCFAOffsetDecode(cfa)
	}
	raIdx := 1
	if flex {
		raIdx = 3
	}
	ra, raOK := word(raIdx)
	if (!flex || !raOK) && h.CFAFixedRAOffset != 0 && !undefined {
		ra, raOK = int32(h.CFAFixedRAOffset), true
	}
	fpIdx := 2
	if h.CFAFixedRAOffset != 0 {
		fpIdx = 1
	}
	if flex {
		if len(e.Words) > 2 && e.UWord(2) == 0 {
			fpIdx = 4
		} else {
			fpIdx = 5
		}
	}
	fp, fpOK := word(fpIdx)
	if (!flex || !fpOK) && h.CFAFixedFPOffset != 0 && !undefined {
		fp, fpOK = int32(h.CFAFixedFPOffset), true
	}
	base := 0
	if e.BaseRegSP() {
		base = 1
	}
	mangled, undef := 0, 0
	if e.MangledRA() {
		mangled = 1
	}
	if undefined {
		undef = 1
	}
	return fmt.Sprintf("cfa %d %s ra %s fp %s mangled %d undefined %d", base, show(cfa, cfaOK), show(ra, raOK), show(fp, fpOK), mangled, undef)
}

// linkedInputs returns the linked files under testdata/link and the
// sections GNU ld made for their twins (X.gs.so.sframe and the like).
func linkedInputs(t *testing.T) (files, gnuSections []string) {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(testdataDir(), "link", "*", "*"))
	for _, p := range all {
		base := filepath.Base(p)
		switch {
		case strings.HasSuffix(base, ".sframe"):
			gnuSections = append(gnuSections, p)
		case strings.Contains(base, ".gs."), strings.HasSuffix(base, ".o"):
		case strings.HasSuffix(base, ".so"), strings.HasSuffix(base, ".exe"):
			files = append(files, p)
		}
	}
	if len(files) < 10 || len(gnuSections) < 10 {
		t.Fatalf("found %d linked files and %d GNU sections under %s; expected the committed golden files", len(files), len(gnuSections), testdataDir())
	}
	return files, gnuSections
}

// compareLookup checks that libsframe reads the section data as we do.
func compareLookup(t *testing.T, prog, name string, data []byte) {
	t.Helper()
	compareLookupWith(t, prog, name, data, gnuFindFRE)
}

// compareLookupWith is compareLookup with find as sframe_find_fre.
func compareLookupWith(t *testing.T, prog, name string, data []byte, find func(*emit.Section, int64) *emit.FRE) {
	t.Helper()
	s, err := emit.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := runLookup(t, prog, data)
	if want := lookupTextWith(s, find); got != want {
		t.Errorf("%s: libsframe (got) reads the section otherwise than emit.Decode (want):\n%s", name, firstDiff(want, got))
	}
}

// TestLibsframeLookup runs GNU libsframe (sframe_decode, sframe_find_fre
// at every FRE of every function, the offset accessors) on the sections
// GNU ld made for the linked goldens and on the sections sframe-gen makes
// for them, and requires what it reads to be what emit.Decode reads, with
// libsframe's lookup rules.
func TestLibsframeLookup(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs libsframe at every FRE of every linked golden (make test-long)")
	}
	prog := libsframeLookup(t)
	files, gnu := linkedInputs(t)
	for _, p := range gnu {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		compareLookup(t, prog, p, data)
	}
	dir := t.TempDir()
	for i, p := range files {
		out := filepath.Join(dir, fmt.Sprint(i))
		if _, stderr, code := runCLI("--raw", "-o", out, p); code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		compareLookup(t, prog, p, data)
	}
}
