package lower

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
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
				r.Section.FDEs = append(r.Section.FDEs, emit.FDE{Size: uint32(i)})
				r.Starts = append(r.Starts, uint64(1000+i))
				r.Sources = append(r.Sources, &cfi.FDE{Start: uint64(i)})
			}
			want := &Result{Section: &emit.Section{}}
			for _, p := range perm {
				want.Section.FDEs = append(want.Section.FDEs, r.Section.FDEs[p])
				want.Starts = append(want.Starts, r.Starts[p])
				want.Sources = append(want.Sources, r.Sources[p])
			}
			p := make([]uint64, len(perm))
			for i, k := range perm {
				p[i] = uint64(k)
			}
			r.permute(p)
			if !slices.EqualFunc(r.Section.FDEs, want.Section.FDEs, func(a, b emit.FDE) bool { return a.Size == b.Size }) || !slices.Equal(r.Starts, want.Starts) || !slices.Equal(r.Sources, want.Sources) {
				t.Errorf("n=%d seed=%d perm %v: FDEs %v, want %v", n, seed, perm, r.Section.FDEs, want.Section.FDEs)
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
	}{{0, 1}, {1, 1}, {2, 4}, {100, 16}, {3000, 1 << 12}, {3000, 1 << 40}, {3000, 1 << 62}, {3000, math.MaxUint64}} {
		for round := 0; round < 5; round++ {
			r := &Result{Starts: make([]uint64, tc.n)}
			for i := range r.Starts {
				r.Starts[i] = addr - tc.span/2 + rng.Uint64N(tc.span)
			}
			got := r.placeOrder(addr)
			want := make([]uint64, tc.n)
			for i := range want {
				want[i] = uint64(i)
			}
			rel := func(i uint64) int64 { return int64(r.Starts[i] - addr) }
			slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(rel(a), rel(b)) })
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
