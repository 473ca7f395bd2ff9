package emit

import (
	"bytes"
	"debug/elf"
	"os"
	"testing"
)

// FuzzReader checks that a Reader never panics on what Decode accepts, and
// that every answer is right: the function found holds the PC and the FRE
// found is the last one starting at or before its offset, and Lookup says
// what Header.Frame says of it.
func FuzzReader(f *testing.F) {
	f.Add(example61(f), uint64(0x1000), uint64(0x1010))
	for _, g := range goldenFiles(f) {
		raw, _, _, ok := sframeOf(f, g.elf)
		if ok && len(raw) <= maxFuzzSeed {
			f.Add(raw, uint64(0x400000), uint64(0x401000))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, addr, pc uint64) {
		r, err := NewReader(data, addr)
		if err != nil {
			return
		}
		check := func(pc uint64) {
			i, j, ok := r.Find(pc)
			if !ok {
				return
			}
			s := r.Section()
			fde, err := s.FDE(i)
			if err != nil {
				t.Fatalf("Find(%#x): FDE %d: %v", pc, i, err)
			}
			start := s.FuncStart(i, addr)
			off := pc - start
			if pc < start || off >= uint64(fde.Size) {
				t.Fatalf("Find(%#x): function %d [%#x, +%#x) does not hold it", pc, i, start, fde.Size)
			}
			if fde.PCType() == PCMask {
				off %= uint64(fde.RepSize)
			}
			if uint64(fde.FREs[j].StartAddr) > off {
				t.Fatalf("Find(%#x): FRE %d starts at %#x, after offset %#x", pc, j, fde.FREs[j].StartAddr, off)
			}
			want, err := s.Header.Frame(&fde, &fde.FREs[j])
			l, ok := r.Lookup(pc)
			if ok != (err == nil) {
				t.Fatalf("Lookup(%#x): found %v, Header.Frame: %v", pc, ok, err)
			}
			if ok && (l.Func != i || l.FRE != j || l.Start != start || l.Frame != want) {
				t.Fatalf("Lookup(%#x) = %d/%d %#x %+v, want %d/%d %#x %+v", pc, l.Func, l.FRE, l.Start, l.Frame, i, j, start, want)
			}
		}
		check(pc)
		for k := 0; k < r.NumFuncs() && k < 64; k++ {
			fn := r.Func(k)
			for _, e := range fn.FDE.FREs {
				check(fn.Start + uint64(e.StartAddr))
			}
		}
	})
}

// FuzzReaderFromELF checks that ReaderFromELF (finding the section,
// applying an object's relocations) never panics on any ELF file
// debug/elf accepts, and that what it reads is a section Decode accepts.
func FuzzReaderFromELF(f *testing.F) {
	for _, g := range goldenFiles(f) {
		if data, err := os.ReadFile(g.elf); err == nil && len(data) <= 4*maxFuzzSeed {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		r, err := ReaderFromELF(ef)
		if err != nil {
			return
		}
		for k := 0; k < r.NumFuncs() && k < 64; k++ {
			r.Lookup(r.Func(k).Start)
		}
	})
}
