package lower

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestIsPadding checks the padding MergePadding merges across: the no-op
// instructions compilers and linkers align code with, zeros, and nothing
// else.
func TestIsPadding(t *testing.T) {
	cases := []struct {
		arch Arch
		b    []byte
		want bool
	}{
		{AMD64, []byte{0x90}, true},
		{AMD64, []byte{0x66, 0x90}, true},
		{AMD64, []byte{0x0f, 0x1f, 0x00}, true},
		{AMD64, []byte{0x0f, 0x1f, 0x40, 0x00}, true},
		{AMD64, []byte{0x0f, 0x1f, 0x44, 0x00, 0x00}, true},
		{AMD64, []byte{0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, true},
		{AMD64, []byte{0x0f, 0x1f, 0x80, 0, 0, 0, 0}, true},
		{AMD64, []byte{0x0f, 0x1f, 0x84, 0x00, 0, 0, 0, 0}, true},
		{AMD64, []byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0, 0, 0, 0}, true},
		{AMD64, []byte{0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0, 0, 0, 0, 0x0f, 0x1f, 0x40, 0x00}, true},
		{AMD64, []byte{0xcc, 0xcc, 0xcc}, true},
		{AMD64, []byte{0, 0, 0, 0}, true},
		{AMD64, []byte{0xc3}, false},                                // ret
		{AMD64, []byte{0x90, 0xc3}, false},                          // nop; ret
		{AMD64, []byte{0x0f, 0x1f, 0x48, 0x00}, false},              // 0f 1f /1: not a nop
		{AMD64, []byte{0x0f, 0x1f, 0x84, 0x00, 0, 0}, false},        // cut
		{AMD64, []byte{0x66, 0x2e}, false},                          // prefixes alone
		{AMD64, []byte{0x31, 0xc0}, false},                          // xor %eax,%eax
		{AArch64, []byte{0x1f, 0x20, 0x03, 0xd5, 0, 0, 0, 0}, true}, // nop; zero word
		{AArch64, []byte{0xc0, 0x03, 0x5f, 0xd6}, false},            // ret
		{AArch64, []byte{0x1f, 0x20, 0x03}, false},                  // cut
		{S390X, []byte{0x07, 0x07, 0x47, 0x00, 0x00, 0x00}, true},
		{S390X, []byte{0x07, 0xfe}, false}, // br %r14
	}
	for _, c := range cases {
		if got := isPadding(c.arch, c.b); got != c.want {
			t.Errorf("isPadding(%v, % x) = %v, want %v", c.arch, c.b, got, c.want)
		}
	}
}

// TestMergeFDEsOption lowers the linked files of testdata and the
// system's libc and libstdc++ with each Options.MergeFDEs, with and
// without sharing, and checks against the section lowered without it that
// every address of every function is found in a function of the merged
// section whose FRE for it is the same row; that merged FDEs cover
// nothing but the functions (MergeAdjacent) and padding (MergePadding,
// MergeAll); and that Result.Merged counts the FDEs saved, more with each
// option.
func TestMergeFDEsOption(t *testing.T) {
	libc, libstdcxx := hostLibs(t)
	files := append(testdataELFs(t), libc, libstdcxx)
	merged := map[MergeFDEs]int{}
	for _, name := range files {
		f, tg, frames, ok := openLowerable(name)
		if !ok {
			if _, err := os.Stat(name); err != nil {
				t.Errorf("%v", err)
			}
			continue
		}
		if tg.Relocatable {
			f.Close()
			continue
		}
		plain, _, err := LowerFile(f, frames, tg, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		plain.Place(0x1000)
		pf, err := plain.Section.Functions()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []MergeFDEs{MergeAdjacent, MergePadding, MergeAll} {
			for _, share := range []bool{false, true} {
				for _, scan := range []bool{false, true} {
					what := fmt.Sprintf("%s (merge %d, share %v, scan %v)", name, m, share, scan)
					opt := Options{MergeFDEs: m, ShareFREs: share, NarrowFREs: share, Workers: 2}
					res := lowerPlaced(t, what, f, frames, tg, opt, scan) // (objects are passed over above)
					enc, err := res.Section.Encode()
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					dec, err := emit.Decode(enc)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					mf, err := dec.Functions()
					if err != nil {
						t.Fatal(err)
					}
					if len(pf)-len(mf) != res.Merged {
						t.Errorf("%s: %d FDEs, %d without merging, Merged %d", what, len(mf), len(pf), res.Merged)
					}
					checkMerged(t, what, newGapChecker(f, tg, plain), plain, pf, res, mf, m)
					if !share && !scan {
						merged[m] += res.Merged
					}
				}
			}
		}
		f.Close()
	}
	if merged[MergeAdjacent] == 0 || merged[MergePadding] <= merged[MergeAdjacent] || merged[MergeAll] <= merged[MergePadding] {
		t.Errorf("functions merged: %v", merged)
	}
}

// checkMerged checks the merged section (res, its functions mf) against
// the plain one (plain, its functions pf).
// g reads the file's bytes.
func checkMerged(t *testing.T, what string, g *gapChecker, plain *Result, pf []emit.FDE, res *Result, mf []emit.FDE, m MergeFDEs) {
	t.Helper()
	// find returns the merged FDE holding pc, -1 if none.
	find := func(pc uint64) int {
		k := sort.Search(len(res.Starts), func(k int) bool { return res.Starts[k] > pc }) - 1
		if k < 0 || pc >= res.Starts[k]+uint64(mf[k].Size) {
			return -1
		}
		return k
	}
	row := func(fde *emit.FDE, off uint32) string {
		var e *emit.FRE
		for j := range fde.FREs {
			if fde.FREs[j].StartAddr <= off {
				e = &fde.FREs[j]
			}
		}
		if e == nil {
			return "none"
		}
		return fmt.Sprint(e.Info, e.Words, fde.Info&^0xf, fde.Info2, fde.RepSize)
	}
	covered := uint64(0)
	for i := range pf {
		p := &pf[i]
		start := plain.Starts[i]
		covered += uint64(p.Size)
		offs := []uint32{p.Size - 1}
		for _, e := range p.FREs {
			offs = append(offs, e.StartAddr)
		}
		for _, off := range offs {
			if off >= p.Size {
				continue
			}
			k := find(start + uint64(off))
			if k < 0 {
				t.Fatalf("%s: %#x (function %d) in no merged FDE", what, start+uint64(off), i)
			}
			if g, w := row(&mf[k], uint32(start+uint64(off)-res.Starts[k])), row(p, off); g != w {
				t.Fatalf("%s: at %#x: %s, unmerged %s", what, start+uint64(off), g, w)
			}
		}
	}
	var mcovered uint64
	for k := range mf {
		mcovered += uint64(mf[k].Size)
		for j := 1; j < len(mf[k].FREs); j++ {
			if mf[k].FREs[j].StartAddr <= mf[k].FREs[j-1].StartAddr {
				t.Fatalf("%s: merged FDE %d: FRE %d starts at %#x, not after FRE %d (the Linux kernel refuses it)", what, k, j, mf[k].FREs[j].StartAddr, j-1)
			}
		}
		if k < len(mf)-1 && res.Starts[k]+uint64(mf[k].Size) > res.Starts[k+1] {
			t.Fatalf("%s: merged FDE %d overlaps the next", what, k)
		}
	}
	if m == MergeAdjacent && mcovered != covered || mcovered < covered {
		t.Errorf("%s: merged FDEs cover %d bytes, the functions %d", what, mcovered, covered)
	}
	// What a merged FDE covers beyond the functions: padding bytes.
	i := 0
	for k := range mf {
		lo, hi := res.Starts[k], res.Starts[k]+uint64(mf[k].Size)
		for pc := lo; pc < hi; {
			for i < len(pf) && plain.Starts[i]+uint64(pf[i].Size) <= pc {
				i++
			}
			if i < len(pf) && plain.Starts[i] <= pc {
				pc = plain.Starts[i] + uint64(pf[i].Size)
				continue
			}
			end := hi
			if i < len(pf) {
				end = min(end, plain.Starts[i])
			}
			buf := make([]byte, end-pc)
			if !g.read(pc, buf) || !isPadding(g.arch, buf) {
				t.Fatalf("%s: merged FDE %d covers [%#x, %#x), not padding: % x", what, k, pc, end, buf)
			}
			pc = end
		}
	}
}
