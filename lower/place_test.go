package lower

import (
	"bytes"
	"cmp"
	"debug/elf"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestPermute checks the in-place reordering of Place against a copy, for
// permutations with long cycles, fixed points and none.
func TestPermute(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100} {
		for seed := range uint64(5) {
			rng := rand.New(rand.NewPCG(seed, uint64(n)))
			perm := rng.Perm(n)
			if seed == 0 {
				perm = perm[:0]
				for i := range n {
					perm = append(perm, i)
				}
			}
			r := &Result{Section: &emit.Section{}}
			for i := range n {
				r.Section.Index = append(r.Section.Index, emit.IndexEntry{Size: uint32(i)})
				r.Starts = append(r.Starts, uint64(1000+i))
				r.Sources = append(r.Sources, &cfi.FDE{Start: uint64(i)})
			}
			want := &Result{Section: &emit.Section{}}
			for _, p := range perm {
				want.Section.Index = append(want.Section.Index, r.Section.Index[p])
				want.Starts = append(want.Starts, r.Starts[p])
				want.Sources = append(want.Sources, r.Sources[p])
			}
			r.permute(slices.Clone(perm))
			if !slices.Equal(r.Section.Index, want.Section.Index) || !slices.Equal(r.Starts, want.Starts) || !slices.Equal(r.Sources, want.Sources) {
				t.Errorf("n=%d seed=%d perm %v: FDEs %v, want %v", n, seed, perm, r.Section.Index, want.Section.Index)
			}
		}
	}
}

// TestPlaceOrder checks the radix sort of Place against a stable sort by
// signed section-relative offset: random starts with repeats, starts below
// the section, spans too wide for the radix keys, 0 to 3000 functions.
func TestPlaceOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const addr = 0x8000_0000
	for _, tc := range []struct {
		n    int
		span uint64
	}{{0, 1}, {1, 1}, {2, 4}, {100, 16}, {radixMin - 1, 1 << 20}, {radixMin, 1 << 20}, {3000, 1 << 12}, {3000, 1 << 40}, {3000, 1 << 62}, {3000, math.MaxUint64}, {40000, 1 << 10}, {100000, 1 << 36}} {
		for round := 0; round < 5; round++ {
			r := &Result{Starts: make([]uint64, tc.n)}
			for i := range r.Starts {
				r.Starts[i] = addr - tc.span/2 + rng.Uint64N(tc.span)
			}
			got := r.placeOrder(addr, nil)
			// In memory given (not zeroed), the order at its end.
			mem := make([]int, 2*tc.n+round)
			for i := range mem {
				mem[i] = -1 - i
			}
			if inMem := r.placeOrder(addr, mem); !slices.Equal(inMem, got) {
				t.Fatalf("n %d span %#x: order in memory given differs from the order in its own", tc.n, tc.span)
			} else if inMem != nil && tc.n > 0 && &inMem[0] != &mem[len(mem)-tc.n] {
				t.Fatalf("n %d span %#x: order not at the end of the memory given", tc.n, tc.span)
			}
			want := make([]int, tc.n)
			for i := range want {
				want[i] = i
			}
			rel := func(i int) int64 { return int64(r.Starts[i] - addr) }
			slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(rel(a), rel(b)) })
			if got == nil {
				if !slices.IsSortedFunc(r.Starts, func(a, b uint64) int { return cmp.Compare(int64(a-addr), int64(b-addr)) }) {
					t.Fatalf("n %d span %#x: nil order for unsorted starts", tc.n, tc.span)
				}
				continue
			}
			if !slices.Equal(got, want) {
				t.Fatalf("n %d span %#x: order differs from the stable sort", tc.n, tc.span)
			}
		}
	}
}

// TestEncodeThenPlace checks that EncodeThenPlace writes what Place followed by
// EncodeParts writes, leaving the result as it was, on every linked file
// under testdata and the system's libc and libstdc++ (and LLVM where it
// is), packed and not, at section addresses below, among and above the
// functions.
func TestEncodeThenPlace(t *testing.T) {
	libc, libstdcxx := hostLibs(t)
	files := append(testdataELFs(t), libc, libstdcxx)
	if llvm := sysfiles.BigLib(t); llvm != "" && !testing.Short() {
		files = append(files, llvm)
	}
	n := 0
	for _, name := range files {
		f, tg, frames, ok := openLowerable(name)
		if !ok || tg.Relocatable {
			if ok {
				f.Close()
			}
			continue
		}
		{
			opt := Options{}
			for _, addr := range []uint64{0, 0x10000, frames.FDEs[len(frames.FDEs)/2].Start, 1 << 40} {
				what := fmt.Sprintf("%s (section at %#x)", name, addr)
				r, _, err := LowerFile(f, frames, tg, opt)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				index := slices.Clone(r.Section.Index)
				starts := slices.Clone(r.Starts)
				parts, _, err := r.EncodeThenPlace(addr)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !slices.Equal(index, r.Section.Index) || !slices.Equal(starts, r.Starts) {
					t.Errorf("%s: EncodeThenPlace changed the result", what)
				}
				ref, _, err := LowerFile(f, frames, tg, opt)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				ref.Place(addr)
				want, err := ref.Section.EncodeParts(nil)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !bytes.Equal(bytes.Join(parts, nil), bytes.Join(want, nil)) {
					t.Errorf("%s: EncodeThenPlace's bytes differ from Place and EncodeParts'", what)
				}
				compareEncodeThenPlace(t, what, ref, want, func() (*Result, error) {
					r, _, err := LowerFile(f, frames, tg, opt)
					return r, err
				}, addr)
			}
		}
		f.Close()
		n++
	}
	if n < 12 {
		t.Fatalf("only %d linked files", n)
	}
}

// compareEncodeThenPlace requires EncodeThenPlace(addr) of a result made
// by lower, and its place, to write want, the bytes of ref placed at addr, and to leave the
// result as ref: index, FRE data, Starts, Sources and flags.
func compareEncodeThenPlace(t *testing.T, what string, ref *Result, want [][]byte, lower func() (*Result, error), addr uint64) {
	t.Helper()
	r, err := lower()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	parts, place, err := r.EncodeThenPlace(addr)
	if err != nil {
		t.Fatalf("%s: EncodeThenPlace: %v", what, err)
	}
	place()
	if !bytes.Equal(bytes.Join(parts, nil), bytes.Join(want, nil)) {
		t.Errorf("%s: EncodeThenPlace's bytes differ from Place and EncodeParts'", what)
	}
	got, ws := r.Section, ref.Section
	if !slices.Equal(got.Index, ws.Index) || !bytes.Equal(got.FREData, ws.FREData) || !slices.Equal(r.Starts, ref.Starts) ||
		!slices.Equal(r.Sources, ref.Sources) || got.Header.Flags != ws.Header.Flags {
		t.Errorf("%s: EncodeThenPlace and place left the result other than Place does", what)
	}
}

// TestPlaceLinked undoes ld's sort of each linked golden section by
// shuffling its FDE index, then checks that Place and Encode give ld's
// bytes back: the same order (ties in the order of the FRE data, as ld
// inserts the functions: its qsort is glibc's stable merge sort) and
// start fields. (Place's sort is the one sort of function starts.)
func TestPlaceLinked(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "*", "*.gs.*"))
	n, ties := 0, 0
	for _, name := range files {
		f, err := elf.Open(name)
		if err != nil {
			continue // the expected dumps and sections beside the files
		}
		sf := f.Section(".sframe")
		if sf == nil || f.Type == elf.ET_REL {
			f.Close()
			continue
		}
		raw, err := sf.Data()
		addr := sf.Addr
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sec, err := emit.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sec.Header.Flags&emit.FlagFDESorted == 0 {
			continue
		}
		n++
		starts := make([]uint64, sec.NumFDEs())
		for i := range starts {
			starts[i] = sec.FuncStart(i, addr)
		}
		perm := rand.New(rand.NewPCG(1, uint64(len(raw)))).Perm(len(starts))
		hasTies := false
		for i := 1; i < len(starts); i++ {
			hasTies = hasTies || starts[i] == starts[i-1]
		}
		if hasTies {
			ties++
			slices.SortFunc(perm, func(a, b int) int { return cmp.Compare(sec.Index[a].FREOffset, sec.Index[b].FREOffset) })
		}
		shuffled := *sec
		shuffled.Header.Flags &^= emit.FlagFDESorted
		shuffled.Index = make([]emit.IndexEntry, len(perm))
		res := &Result{Section: &shuffled, Starts: make([]uint64, len(perm))}
		for i, p := range perm {
			shuffled.Index[i] = sec.Index[p]
			res.Starts[i] = starts[p]
		}
		res.Place(addr)
		enc, err := shuffled.Encode()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(enc, raw) {
			t.Errorf("%s: Place of the shuffled index differs from ld's output (ties: %v)", name, hasTies)
		}
	}
	if n == 0 {
		t.Fatal("no sorted linked golden section")
	}
	t.Logf("%d sorted sections, %d with equal starts", n, ties)
}
