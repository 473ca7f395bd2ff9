package lower

import (
	"bytes"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestSortedRuns checks sortRun and order against placeOrder: random
// starts with repeats, spread over a few bytes to 2^40, cut into parts of
// random sizes (some empty) with functions after them, merged in memory
// given (not zeroed) and in their own; and that they give up (false, nil)
// where the values cannot hold the starts, the starts are too far apart
// for the passes, or the runs do not cover the functions one after the
// other.
func TestSortedRuns(t *testing.T) {
	if bits.UintSize < 64 {
		t.Skip("sorted runs are made on 64-bit systems only (newSortedRuns: a value is an int)")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		n, parts, tail int
		span           uint64
	}{{0, 1, 0, 1}, {1, 1, 0, 1}, {5, 3, 2, 4}, {100, 4, 0, 16}, {3000, 8, 8, 1 << 12}, {3000, 8, 3, 1 << 24}, {20000, 16, 0, 1 << 33}, {50000, 8, 8, 1 << 30}} {
		for round := range 4 {
			what := fmt.Sprintf("%d functions, %d parts, span %#x, round %d", tc.n, tc.parts, tc.span, round)
			r := &Result{Starts: make([]uint64, tc.n)}
			for i := range r.Starts {
				r.Starts[i] = 0x10000 + rng.Uint64N(tc.span)
			}
			want := r.placeOrder(0, nil)
			if want == nil {
				want = make([]int, tc.n)
				for i := range want {
					want[i] = i
				}
			}
			s := newSortedRuns(tc.parts, tc.n+tc.tail, emit.HeaderSize)
			// Parts of random sizes over the first n-tail functions, each
			// in a window of the values as big as its size or more.
			cut := []int{0}
			for k := 1; k < tc.parts; k++ {
				cut = append(cut, rng.IntN(max(1, tc.n-tc.tail)+1))
			}
			slices.Sort(cut)
			cut = append(cut, max(0, tc.n-tc.tail))
			for k := range tc.parts {
				starts := r.Starts[cut[k]:cut[k+1]]
				vals, tmp := s.window(cut[k], len(starts))
				if vals == nil || !s.sortRun(k, starts, vals, tmp) {
					t.Fatalf("%s: part %d not sorted", what, k)
				}
				s.runs = append(s.runs, sortedRun{at: cut[k], n: len(starts), first: cut[k]})
			}
			mem := make([]int, tc.n+round)
			for i := range mem {
				mem[i] = -1 - i
			}
			for _, m := range [][]int{nil, mem} {
				got := s.order(r.Starts, m)
				if !slices.Equal(got, want) {
					t.Fatalf("%s: merged order differs from the sort's", what)
				}
				if m != nil && tc.n > 0 && &got[0] != &m[len(m)-tc.n] {
					t.Fatalf("%s: order not at the end of the memory given", what)
				}
			}
			if tc.n == 0 {
				continue
			}
			// A start the values cannot hold: in a part, after them.
			big := uint64(1) << (63 - s.shift)
			if s.sortRun(0, []uint64{1, big}, make([]int, 2), make([]int, 2)) {
				t.Errorf("%s: start %#x sorted", what, big)
			}
			// Starts too far apart for the passes.
			if far := uint64(1) << (maxRunPasses * maxRunDigit); far < big && s.sortRun(0, []uint64{1, 2, 2 + far}, make([]int, 3), make([]int, 3)) {
				t.Errorf("%s: starts 1, 2 and %#x sorted", what, 2+far)
			}
			r.Starts = append(r.Starts, big)
			if got := s.order(r.Starts, nil); got != nil {
				t.Errorf("%s: start %#x after the runs merged", what, big)
			}
			r.Starts = r.Starts[:tc.n]
			// Runs that skip a function or overlap.
			s.runs[len(s.runs)-1].first++
			if got := s.order(r.Starts, nil); got != nil {
				t.Errorf("%s: runs with a gap merged", what)
			}
			s.runs[len(s.runs)-1].first -= 2
			if got := s.order(r.Starts, nil); got != nil && len(s.runs) > 1 {
				t.Errorf("%s: overlapping runs merged", what)
			}
		}
	}
	if newSortedRuns(1<<8, 1<<24, emit.HeaderSize) != nil {
		t.Error("runs of 2^24 functions in 256 parts: values of fewer than 31 bits of start")
	}
	if s := newSortedRuns(4, 100, emit.HeaderSize); s == nil {
		t.Error("no runs of 100 functions in 4 parts")
	} else if vals, _ := s.window(90, 11); vals != nil {
		t.Error("a window past the room of the memory")
	}
}

// TestEncodeThenPlaceRuns checks that a result lowered in parts is placed
// from its sorted runs (libstdc++, LLVM when present, on 2 and 3
// workers), giving the bytes of Place and Encode, and that EncodeThenPlace
// still gives those when the runs are wrong: starts changed after
// lowering, a section address where the starts' signed offsets do not
// keep their unsigned order.
func TestEncodeThenPlaceRuns(t *testing.T) {
	if bits.UintSize < 64 {
		t.Skip("sorted runs are made on 64-bit systems only (newSortedRuns: a value is an int)")
	}
	_, libstdcxx := hostLibs(t)
	files := []string{libstdcxx}
	if llvm := sysfiles.BigLib(t); llvm != "" && !testing.Short() {
		files = append(files, llvm)
	}
	n := 0
	for _, name := range files {
		f, tg, _, ok := openLowerable(name)
		if !ok {
			t.Fatalf("%s cannot be lowered", name)
		}
		for _, workers := range []int{2, 3} {
			parts := 0 // the parts LowerScan cuts the section into
			lower := func() *Result {
				frames, err := cfi.Open(f, cfi.Auto)
				if err != nil {
					t.Fatal(err)
				}
				parts = len(partWeights(workers, len(frames.Data)))
				res, _, _, err := LowerScan(f, frames, tg, Options{Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			mid := lower().Starts[100]
			for _, tc := range []struct {
				what   string
				addr   uint64
				change func(r *Result)
			}{
				{"as lowered", 0x10000, nil},
				{"section among the functions", mid, nil},
				{"starts swapped", 0x10000, func(r *Result) {
					r.Starts[10], r.Starts[len(r.Starts)/2] = r.Starts[len(r.Starts)/2], r.Starts[10]
				}},
				{"two starts made equal", 0x10000, func(r *Result) { r.Starts[11] = r.Starts[len(r.Starts)/2] }},
				{"signed offsets wrap", mid + 1<<63, nil},
			} {
				what := fmt.Sprintf("%s, %d workers, %s", name, workers, tc.what)
				res := lower()
				if res.runs == nil || len(res.runs.runs) != parts {
					t.Fatalf("%s: no sorted runs of every part", what)
				}
				if tc.change != nil {
					tc.change(res)
				}
				ref := &Result{Section: res.Section, Starts: slices.Clone(res.Starts)}
				merged := res.runs.order(res.Starts, nil)
				if want := ref.placeOrder(tc.addr, nil); (tc.change == nil && tc.addr != mid+1<<63) != slices.Equal(merged, want) {
					t.Errorf("%s: merged order equal to the sort's: %v", what, slices.Equal(merged, want))
				}
				parts, _, err := res.EncodeThenPlace(tc.addr)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				// Again: the same bytes, the first ones left as they were
				// (the runs are used once: the index is written over them).
				first := bytes.Join(parts, nil)
				again, _, err := res.EncodeThenPlace(tc.addr)
				if err != nil {
					t.Fatalf("%s, again: %v", what, err)
				}
				if !bytes.Equal(bytes.Join(again, nil), first) || !bytes.Equal(bytes.Join(parts, nil), first) {
					t.Errorf("%s: EncodeThenPlace twice: other bytes", what)
				}
				res.Place(tc.addr)
				want, err := res.Section.EncodeParts(nil)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !bytes.Equal(bytes.Join(parts, nil), bytes.Join(want, nil)) {
					t.Errorf("%s: EncodeThenPlace differs from Place and EncodeParts", what)
				}
				compareEncodeThenPlace(t, what, res, want, func() (*Result, error) {
					r := lower()
					if tc.change != nil {
						tc.change(r)
					}
					return r, nil
				}, tc.addr)
			}
		}
		f.Close()
		n++
	}
	if n == 0 {
		t.Fatal("no file lowered")
	}
}
