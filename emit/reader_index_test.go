package emit

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// indexFunc is a function of an indexCase: where it starts, its size, PC
// type and repeat size, and its FREs (by their starts; each FRE's CFA
// offset is its start plus 8, so that every FRE means something else).
type indexFunc struct {
	start  uint64
	size   uint32
	mask   bool
	rep    uint8
	starts []uint32
	flex   bool // a flex FDE whose one data word means nothing: Lookup fails
}

// indexCases are layouts of functions that exercise each way the Reader
// finds a function and an FRE: no function, one, gaps, a gap so wide the
// search entries do not fit (more than 4 GiB), a function at the end of
// the address space, PCMASK functions, functions of one FRE at their start
// (kept in the search entry), of up to 16 FREs (searched in steps) and of
// more (searched in a loop), buckets of 8 and fewer functions (compared at
// once), of up to 16 and of more.
func indexCases() []struct {
	name  string
	funcs []indexFunc
} {
	fres := func(n int, step uint32) []uint32 {
		s := make([]uint32, n)
		for i := range s {
			s[i] = uint32(i) * step
		}
		return s
	}
	dense := func(n int, at uint64) []indexFunc {
		fs := make([]indexFunc, n)
		for i := range fs {
			fs[i] = indexFunc{start: at + uint64(i)*3, size: 2, starts: []uint32{0}}
			if i%3 == 1 {
				fs[i].starts = []uint32{0, 1}
			}
		}
		return fs
	}
	return []struct {
		name  string
		funcs []indexFunc
	}{
		{"no function", nil},
		{"one function, one FRE at its start", []indexFunc{{start: 0x1000, size: 0x10, starts: []uint32{0}}}},
		{"one function, its FRE after its start", []indexFunc{{start: 0x1000, size: 0x10, starts: []uint32{4}}}},
		{"gaps between functions", []indexFunc{
			{start: 0x1000, size: 0x10, starts: []uint32{0}},
			{start: 0x1020, size: 0x30, starts: []uint32{0, 1, 4, 0x2f}},
			{start: 0x1050, size: 0x8, starts: []uint32{2}},
			{start: 0x9000, size: 0x100, starts: []uint32{0}},
		}},
		{"a gap of 4 GiB", []indexFunc{
			{start: 0x1000, size: 0x10, starts: []uint32{0}},
			{start: 0x1000 + 1<<32, size: 0x10, starts: []uint32{0, 8}},
		}},
		{"a gap of 2^40", []indexFunc{
			{start: 0x1000, size: 0x10, starts: []uint32{0, 3}},
			{start: 1 << 40, size: 0x10, starts: []uint32{0}},
			{start: 1<<62 + 3, size: 0x10, starts: []uint32{1}},
		}},
		{"a function ending below 4 GiB from the first", []indexFunc{
			{start: 0x1000, size: 0x10, starts: []uint32{0}},
			{start: 0x1000 + 1<<32 - 0x20, size: 0x1f, starts: []uint32{0}},
		}},
		{"a size too big for its search entry", []indexFunc{
			{start: 0x1000, size: 0x50000000, starts: []uint32{0, 0x4fffffff}},
			{start: 0x60000000, size: 0x10, starts: []uint32{0}},
			{start: 0x1000 + 1<<32 - 0x20, size: 0x1f, starts: []uint32{0}},
		}},
		{"a function at the end of the address space", []indexFunc{
			{start: ^uint64(0) - 0x2f, size: 0x10, starts: []uint32{0}},
			{start: ^uint64(0) - 0xf, size: 0x10, starts: []uint32{0, 0xf}},
		}},
		{"PCMASK functions", []indexFunc{
			{start: 0x1000, size: 0x40, mask: true, rep: 16, starts: []uint32{0}},
			{start: 0x1040, size: 0x40, mask: true, rep: 16, starts: []uint32{0, 6, 11}},
			{start: 0x1080, size: 0x40, mask: true, rep: 0, starts: []uint32{0}},
			{start: 0x10c0, size: 0x40, mask: true, rep: 16, starts: []uint32{4}},
		}},
		{"an FRE that means nothing", []indexFunc{
			{start: 0x1000, size: 0x10, starts: []uint32{0}, flex: true},
			{start: 0x1010, size: 0x10, starts: []uint32{0}},
		}},
		{"blocks of 1 to 18 FREs", func() []indexFunc {
			var fs []indexFunc
			for n := 1; n <= 18; n++ {
				fs = append(fs, indexFunc{start: 0x10000 + uint64(n)*0x1000, size: 0x800, starts: fres(n, 0x40)})
				fs = append(fs, indexFunc{start: 0x10800 + uint64(n)*0x1000, size: 0x800, starts: fres(n, 3)[1:]})
			}
			return fs
		}()},
		{"a block of 300 FREs, 2-byte starts", []indexFunc{{start: 0x1000, size: 0x10000, starts: fres(300, 0x80)}}},
		{"blocks of 4-byte starts, the last of 16 FREs", []indexFunc{
			{start: 0x1000, size: 0x200000, starts: fres(3, 0x10000)},
			{start: 0x400000, size: 0x200000, starts: fres(16, 0x10000)},
		}},
		{"buckets of 8, 9, 16 and 17 functions", append(append(append(dense(8, 0x100000), dense(9, 0x200000)...), dense(16, 0x300000)...), dense(17, 0x400000)...)},
		{"a bucket of 200 functions", dense(200, 0x1000)},
		// 300 functions in one bucket: the bucket tables in groups
		// of one bucket (Reader.gshift 0; TestReaderIndex checks that
		// some case has them).
		{"a bucket of 300 functions", append(append([]indexFunc{{start: 0x1000, size: 2, starts: []uint32{0}}}, dense(300, 0x40000)...),
			indexFunc{start: 0x100000, size: 2, starts: []uint32{0}})},
	}
}

// TestReaderIndex checks Find, Lookup and Covering on indexCases at every
// place a search can go wrong (each function's edges and FREs' starts,
// the PCs around them, the first and last addresses), against a plain
// reading of the functions: the one that holds the PC, the last FRE
// starting at or before its offset (modulo the repeat size for PCMASK).
func TestReaderIndex(t *testing.T) {
	h := Header{Version: Version3, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8}
	groups := map[uint]bool{} // the cases' Reader.gshift
	for _, tc := range indexCases() {
		t.Run(tc.name, func(t *testing.T) {
			var fdes []FDE
			for _, f := range tc.funcs {
				pc := PCInc
				if f.mask {
					pc = PCMask
				}
				ft := FREAddr2
				if f.size > 1<<16 {
					ft = FREAddr4
				}
				fde := FDE{Size: f.size, Info: FuncInfo(pc, ft, false, false), RepSize: f.rep}
				if f.flex {
					fde.Info2 = uint8(FDEFlex)
				}
				for _, st := range f.starts {
					fde.FREs = append(fde.FREs, FRE{StartAddr: st, Info: FREInfo(true, 1, DataWord4B, false), Words: []int32{int32(st) + 8}})
				}
				fdes = append(fdes, fde)
			}
			s := mustSection(t, h, fdes)
			for i, f := range tc.funcs {
				s.SetFuncStart(i, f.start, 0)
			}
			r, err := ReaderFor(s, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.funcs) > 0 {
				groups[r.gshift] = true
			}
			pcs := []uint64{0, 1, ^uint64(0), ^uint64(0) - 1, 1 << 32, 1<<32 - 1}
			for _, f := range tc.funcs {
				end := f.start + uint64(f.size)
				pcs = append(pcs, f.start-1, f.start, f.start+1, end-1, end, end+1, f.start+uint64(f.size)/2)
				for _, st := range f.starts {
					pcs = append(pcs, f.start+uint64(st)-1, f.start+uint64(st), f.start+uint64(st)+1)
					if f.rep > 0 {
						pcs = append(pcs, f.start+uint64(f.rep)+uint64(st)-1, f.start+uint64(f.rep)+uint64(st))
					}
				}
			}
			for _, pc := range pcs {
				checkIndexPC(t, s, tc.funcs, r, pc)
			}
		})
	}
	if !groups[0] || !groups[maxGroupShift] {
		t.Errorf("the cases' bucket tables have groups of 1<<%v buckets; want some of 1 and some of %d", slices.Sorted(maps.Keys(groups)), 1<<maxGroupShift)
	}
}

// checkIndexPC checks r's answers for pc against funcs read plainly.
func checkIndexPC(t *testing.T, s *Section, funcs []indexFunc, r *Reader, pc uint64) {
	t.Helper()
	fn, fre := -1, -1
	for i, f := range funcs {
		if pc < f.start || pc-f.start >= uint64(f.size) {
			continue
		}
		fn = i
		off := pc - f.start
		if f.mask {
			if f.rep == 0 {
				break
			}
			off %= uint64(f.rep)
		}
		for j, st := range f.starts {
			if uint64(st) <= off {
				fre = j
			}
		}
	}
	want := fmt.Sprintf("function %d FRE %d", fn, fre)
	c, cok := r.Covering(pc)
	if cok != (fn >= 0) || cok && (c.Index != fn || c.Start != funcs[fn].start) {
		t.Errorf("Covering(%#x) = %+v %v, want function %d", pc, c, cok, fn)
	}
	i, j, ok := r.Find(pc)
	if got := fmt.Sprintf("function %d FRE %d", i, j); ok != (fre >= 0) || ok && got != want {
		t.Errorf("Find(%#x) = %s %v, want %s", pc, got, ok, want)
	}
	l, lok := r.Lookup(pc)
	if fre < 0 || funcs[fn].flex {
		if lok {
			t.Errorf("Lookup(%#x) = %+v, want nothing (%s)", pc, l, want)
		}
		return
	}
	fde, err := s.FDE(fn)
	if err != nil {
		t.Fatal(err)
	}
	wantFrame, err := s.Header.Frame(&fde, &fde.FREs[fre])
	if err != nil {
		t.Fatal(err)
	}
	if !lok || l.Func != fn || l.FRE != fre || l.Start != funcs[fn].start || l.Frame != wantFrame {
		t.Errorf("Lookup(%#x) = %+v %v, want %s at %#x, %+v", pc, l, lok, want, funcs[fn].start, wantFrame)
	}
}

// TestGroupShift checks the size of the bucket tables' groups for counts
// of functions below each bucket: the most buckets, up to 16, over which
// the counts stay within a byte of the group's first.
func TestGroupShift(t *testing.T) {
	steps := func(n int, step uint32) []uint32 {
		c := make([]uint32, n)
		for i := range c {
			c[i] = uint32(i) * step
		}
		return c
	}
	jump := func(n, at int, by uint32) []uint32 {
		c := make([]uint32, n)
		for i := at; i < n; i++ {
			c[i] = by
		}
		return c
	}
	tests := []struct {
		name   string
		counts []uint32
		want   uint
	}{
		{"one bucket", []uint32{0, 0}, maxGroupShift},
		{"no function", make([]uint32, 40), maxGroupShift},
		{"17 a bucket", steps(64, 17), maxGroupShift},         // 15*17 = 255 above a group's first
		{"18 a bucket", steps(64, 18), 3},                     // 15*18 = 270; 7*18 = 126
		{"255 in a bucket", jump(64, 5, 255), maxGroupShift},  // within a byte
		{"256 in a bucket", jump(64, 5, 256), 0},              // buckets 4 and 5 in no group
		{"256 in a bucket, groups of 4", jump(64, 4, 256), 2}, // bucket 4 starts a group of 4
		{"256 in the bucket before a group", jump(64, 16, 256), maxGroupShift},
		{"a short table", []uint32{0, 300}, 0},
		{"a short table, 255", []uint32{0, 100, 255}, maxGroupShift},
		{"300 in the last bucket, alone in its group", append(steps(16, 1), 15+300), maxGroupShift},
	}
	for _, tc := range tests {
		if got := groupShift(tc.counts); got != tc.want {
			t.Errorf("%s: groupShift = %d, want %d", tc.name, got, tc.want)
		}
	}
}
