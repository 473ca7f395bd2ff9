package stats_test

import (
	"debug/elf"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/stats"
)

// measureFile measures the .sframe section of the ELF file at path.
func measureFile(t *testing.T, path string) *stats.Stats {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, data, err := emit.ReadELFSection(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s, err := emit.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	fdes, err := s.Functions()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	st, err := stats.Measure(s, fdes, data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st
}

// TestMeasure checks the figures of GNU ld's section of a shared library
// with a lazy PLT (the example of docs/stats.md), counted by hand from
// objdump --sframe.
func TestMeasure(t *testing.T) {
	got := measureFile(t, "../../testdata/link/x86_64/lazy.gs.so")
	want := &stats.Stats{
		ABI: "SFRAME_ABI_AMD64_ENDIAN_LITTLE", Version: 3,
		Skipped: []stats.Reason{}, V2LostReasons: []stats.Reason{}, FDEs: 11, PCMaskFDEs: 2, FREs: 78,
		FREsByAddrSize: [3]int{41, 37, 0}, FREsByWordSize: [3]int{71, 7, 0}, FREsByWordCount: [7]int{0, 31, 47},
		Sizes: stats.Sizes{UnsharedBytes: 589, SharedBytes: 589, SectionBytes: 589,
			Breakdown: stats.Breakdown{Header: 28, FDEIndex: 11 * 16, FDEAttributes: 11 * 5, FREStartAddresses: 41 + 37*2,
				FREInfo: 78, DataWords: 137}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestMeasureAddsUp checks, on every GNU-made section under
// testdata/link (versions 2 and 3, every ABI), that the breakdown adds up
// to the section's size, the FRE counts to the number of FREs, and that
// sharing never makes a section bigger.
func TestMeasureAddsUp(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/link/*/*.gs.so")
	if len(files) < 5 {
		t.Fatalf("found %d files; want testdata/link's GNU-linked libraries", len(files))
	}
	for _, path := range files {
		st := measureFile(t, path)
		if sum := st.Breakdown.Sum(); sum != st.SectionBytes {
			t.Errorf("%s: breakdown %+v adds up to %d, section %d bytes", path, st.Breakdown, sum, st.SectionBytes)
		}
		if n := st.FREsByAddrSize[0] + st.FREsByAddrSize[1] + st.FREsByAddrSize[2]; n != st.FREs {
			t.Errorf("%s: %d FREs by address size, %d FREs", path, n, st.FREs)
		}
		n := 0
		for _, c := range st.FREsByWordCount {
			n += c
		}
		if n != st.FREs {
			t.Errorf("%s: %d FREs by word count, %d FREs", path, n, st.FREs)
		}
		// GNU's form (unshared) loses to the shared one what the repeated
		// blocks take and what narrower FRE types save.
		if st.SharedBytes > st.UnsharedBytes || st.RepeatedBytes < 0 || st.RepeatedBytes > st.UnsharedBytes-st.SharedBytes {
			t.Errorf("%s: shared %d, unshared %d, repeated %d bytes", path, st.SharedBytes, st.UnsharedBytes, st.RepeatedBytes)
		}
		if b := st.Breakdown; b.SharingSaved+b.NarrowingSaved != st.UnsharedBytes-st.SectionBytes {
			t.Errorf("%s: sharing saved %d + narrowing saved %d, unshared %d - section %d bytes", path, b.SharingSaved, b.NarrowingSaved, st.UnsharedBytes, st.SectionBytes)
		}
	}
}

func TestTallySorted(t *testing.T) {
	tests := []struct {
		name string
		add  []stats.Reason // one call of Add per entry: Reason, Bytes
		want []stats.Reason
	}{
		{"none", nil, []stats.Reason{}},
		{"most functions first", []stats.Reason{{Reason: "b", Bytes: 1}, {Reason: "a", Bytes: 2}, {Reason: "b", Bytes: 3}},
			[]stats.Reason{{Reason: "b", Functions: 2, Bytes: 4}, {Reason: "a", Functions: 1, Bytes: 2}}},
		{"ties by reason", []stats.Reason{{Reason: "z", Bytes: 1}, {Reason: "a", Bytes: 9}},
			[]stats.Reason{{Reason: "a", Functions: 1, Bytes: 9}, {Reason: "z", Functions: 1, Bytes: 1}}},
	}
	for _, tt := range tests {
		tally := stats.Tally{}
		for _, a := range tt.add {
			tally.Add(a.Reason, a.Bytes)
		}
		if got := tally.Sorted(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestTotalAdd(t *testing.T) {
	a := &stats.Stats{Kind: "object", ABI: "x", FDEs: 2, Sizes: stats.Sizes{SectionBytes: 10, Breakdown: stats.Breakdown{Header: 4, DataWords: 6}}}
	b := &stats.Stats{Kind: "executable", ABI: "x", FDEs: 3, Sizes: stats.Sizes{SectionBytes: 20, Breakdown: stats.Breakdown{Header: 8, DataWords: 12}}}
	total := stats.NewTotal()
	total.Add(a)
	total.Add(b)
	if total.Files != 2 || total.FDEs != 5 || total.SectionBytes != 30 || total.Breakdown.Sum() != 30 {
		t.Errorf("total %+v", total.Counts)
	}
	if k := total.ByKind["object"]; k == nil || k.Files != 1 || k.FDEs != 2 {
		t.Errorf("by kind object: %+v", k)
	}
	if x := total.ByABI["x"]; x == nil || x.Files != 2 || x.SectionBytes != 30 {
		t.Errorf("by ABI x: %+v", x)
	}
}
