package sframegen

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/lower"
)

// sectionOptionSets are the option sets whose sections
// TestSectionReadsAsItsBytes reads: both versions (version 2 in both
// layouts), shared FRE blocks or not, gas-compat.
var sectionOptionSets = []struct {
	name string
	opt  Options
	// refusedIn are the testdata directories whose files the set
	// refuses (binutils 2.44 had no s390x ABI). (ShareAlways refuses a
	// big-endian file: ErrShareBigEndian.)
	refusedIn []string
}{
	{"default", Options{}, nil},
	{"share-never", Options{Share: ShareNever}, nil},
	// (binutils' libsframe cannot read shared blocks in the other byte
	// order: ShareAlways refuses big-endian files.)
	{"share-always", Options{Share: ShareAlways}, nil}, // ErrShareBigEndian skipped
	{"gas-compat", Options{GasCompat: true}, nil},
	{"v2-2.45", Options{Version: 2, V2Layout: lower.V2PCRel}, nil},
	{"v2-2.44", Options{Version: 2, V2Layout: lower.V2Binutils244}, []string{"s390x"}},
	{"v2-2.45-share-never", Options{Version: 2, V2Layout: lower.V2PCRel, Share: ShareNever}, nil},
}

// goldenELFFiles returns the ELF files of testdata/link, testdata/gas,
// testdata/cc and testdata/sample: the linked files and objects the golden
// tests generate from.
func goldenELFFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"testdata/link", "testdata/gas", "testdata/cc", "testdata/sample"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.HasPrefix(b, []byte("\x7fELF")) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 100 {
		t.Fatalf("%d ELF files in testdata/link and testdata/gas, want the golden set (206)", len(files))
	}
	return files
}

// TestSectionReadsAsItsBytes: the section the library returns
// (Section.Result().Section) is the one Decode makes of the bytes it writes
// (Section.Data), encodes to them, and reads as they do: Dump, DumpJSON,
// NumFDEs, NumFREs, FDE and Reader.Lookup (at each function's start,
// middle and end and each FRE's start) give the same answers on both, for
// every golden input and option set. In -short, every input with the
// default options and each of the other sets on a third of them, in turn
// (make test-long: every pair).
func TestSectionReadsAsItsBytes(t *testing.T) {
	generated, want := 0, 500
	if testing.Short() {
		want = 200
	}
	for fi, file := range goldenELFFiles(t) {
		for si, set := range sectionOptionSets {
			if testing.Short() && si > 0 && (fi+si)%3 != 0 {
				continue
			}
			sec, err := GenerateFile(file, set.opt)
			if errors.Is(err, ErrNoCFI) || errors.Is(err, ErrNoFunctions) || errors.Is(err, ErrShareBigEndian) {
				continue
			}
			if refused(file, set.refusedIn) {
				if err == nil {
					t.Errorf("%s %s: generated, want a refusal", file, set.name)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", file, set.name, err)
				continue
			}
			generated++
			compareSectionWithBytes(t, file+" "+set.name, sec.Result().Section, sec.Bytes(), sec.Addr)
		}
	}
	t.Logf("%d sections generated and compared", generated)
	if generated < want {
		t.Errorf("%d sections generated, want the golden set's (over %d)", generated, want)
	}
}

// compareSectionWithBytes requires sec to read as data, its encoding at
// addr, does.
func compareSectionWithBytes(t *testing.T, name string, sec *emit.Section, data []byte, addr uint64) {
	t.Helper()
	dec, err := emit.Decode(data)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	// One form: Decode gives back the section lower made (but where a
	// version 2 section shares FREs between records of another info:
	// Decode makes a copy of the record where the first one is).
	if !sec.SharedV2 && (!reflect.DeepEqual(sec.Header, dec.Header) || !slices.Equal(sec.Index, dec.Index) ||
		!bytes.Equal(sec.FREData, dec.FREData) || sec.FRECount != dec.FRECount || !bytes.Equal(sec.Trailer, dec.Trailer)) {
		t.Errorf("%s: the section decoded from the bytes is not the library's", name)
	}
	if enc, err := sec.Encode(); err != nil || !bytes.Equal(enc, data) {
		t.Errorf("%s: Encode of the library's section: %v, or other bytes", name, err)
	}
	if got, want := sec.NumFDEs(), dec.NumFDEs(); got != want {
		t.Errorf("%s: NumFDEs %d, the bytes have %d", name, got, want)
	}
	if got, want := sec.NumFREs(), dec.NumFREs(); got != want {
		t.Errorf("%s: NumFREs %d, the bytes have %d", name, got, want)
	}
	for i := range dec.NumFDEs() {
		got, err := sec.FDE(i)
		want, _ := dec.FDE(i)
		if sec.SharedV2 {
			got.FREOffset, want.FREOffset = 0, 0
		}
		if err != nil || !reflect.DeepEqual(withNilEmpty(got), withNilEmpty(want)) {
			t.Errorf("%s: FDE(%d) = %+v, %v; the bytes have %+v", name, i, got, err, want)
			break
		}
	}
	for _, dump := range []struct {
		name string
		f    func(*bytes.Buffer, *emit.Section) error
	}{
		{"Dump", func(b *bytes.Buffer, s *emit.Section) error { return emit.Dump(b, s, addr, ".sframe") }},
		{"DumpJSON", func(b *bytes.Buffer, s *emit.Section) error { return emit.DumpJSON(b, s, addr, ".sframe") }},
	} {
		var got, want bytes.Buffer
		if err := dump.f(&got, sec); err != nil {
			t.Errorf("%s: %s: %v", name, dump.name, err)
		}
		if err := dump.f(&want, dec); err != nil {
			t.Errorf("%s: %s of the bytes: %v", name, dump.name, err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: %s differs from the bytes':\n%s\nwant\n%s", name, dump.name, head(got.String()), head(want.String()))
		}
	}
	compareLookups(t, name, sec, data, addr)
}

// compareLookups requires a Reader of sec (ReaderFor) to answer as one of
// its bytes (NewReader) at every FRE start and around every function.
func compareLookups(t *testing.T, name string, sec *emit.Section, data []byte, addr uint64) {
	t.Helper()
	got, err := emit.ReaderFor(sec, addr)
	if err != nil {
		t.Errorf("%s: ReaderFor: %v", name, err)
		return
	}
	want, err := emit.NewReader(data, addr)
	if err != nil {
		t.Errorf("%s: NewReader: %v", name, err)
		return
	}
	if got.NumFuncs() != want.NumFuncs() {
		t.Errorf("%s: Reader has %d functions, the bytes' %d", name, got.NumFuncs(), want.NumFuncs())
	}
	found := 0
	for _, pc := range lookupPCs(want) {
		g, gok := got.Lookup(pc)
		w, wok := want.Lookup(pc)
		if gok != wok || g != w {
			t.Errorf("%s: Lookup(%#x) = %+v %v, the bytes' %+v %v", name, pc, g, gok, w, wok)
			return
		}
		if wok {
			found++
		}
	}
	if want.NumFuncs() > 0 && found == 0 {
		t.Errorf("%s: no PC looked up was found", name)
	}
}

// lookupPCs are the PCs compareLookups asks about: each FRE's start (of a
// PCMASK function, in its first and second block), and each function's
// start, middle, last byte and end, and the PCs below and above all.
func lookupPCs(r *emit.Reader) []uint64 {
	var pcs []uint64
	for k := range r.NumFuncs() {
		fn := r.Func(k)
		size := uint64(fn.FDE.Size)
		pcs = append(pcs, fn.Start-1, fn.Start, fn.Start+size/2, fn.Start+size-1, fn.Start+size, fn.Start+size+1)
		for _, e := range fn.FDE.FREs {
			pc := fn.Start + uint64(e.StartAddr)
			pcs = append(pcs, pc, pc+1)
			if fn.FDE.PCType() == emit.PCMask {
				pcs = append(pcs, pc+uint64(fn.FDE.RepSize))
			}
		}
	}
	if n := r.NumFuncs(); n > 0 {
		last := r.Func(n - 1)
		pcs = append(pcs, 0, r.Func(0).Start/2, last.Start+uint64(last.FDE.Size)+0x1000, ^uint64(0))
	}
	return pcs
}

// withNilEmpty is f with its empty FRE and word lists nil, as Decode
// leaves them: nil and empty say the same.
func withNilEmpty(f emit.FDE) emit.FDE {
	if len(f.FREs) == 0 {
		f.FREs = nil
		return f
	}
	f.FREs = slices.Clone(f.FREs)
	for j := range f.FREs {
		if len(f.FREs[j].Words) == 0 {
			f.FREs[j].Words = nil
		}
	}
	return f
}

// head is the first lines of a dump, for a message.
func head(s string) string {
	const n = 2000
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// refused reports whether file is in one of the directories dirs (named
// by their last component: testdata/cc/s390x/O2/x.o is in s390x).
func refused(file string, dirs []string) bool {
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(file)), "/") {
		if slices.Contains(dirs, part) {
			return true
		}
	}
	return false
}
