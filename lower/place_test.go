package lower

import (
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
			r.permute(slices.Clone(perm))
			if !slices.EqualFunc(r.Section.FDEs, want.Section.FDEs, func(a, b emit.FDE) bool { return a.Size == b.Size }) || !slices.Equal(r.Starts, want.Starts) || !slices.Equal(r.Sources, want.Sources) {
				t.Errorf("n=%d seed=%d perm %v: FDEs %v, want %v", n, seed, perm, r.Section.FDEs, want.Section.FDEs)
			}
		}
	}
}
