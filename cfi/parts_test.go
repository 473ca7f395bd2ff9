package cfi

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestParseParts checks that reading a section in parts at once gives what
// one walk gives: the same FDEs, CIEs and errors, in order, and one CIE
// object per CIE (the one in Frames.CIEs when the walk met it), for every
// ELF file under testdata, the system's libc and libstdc++, and LLVM 15
// where it is installed.
func TestParseParts(t *testing.T) {
	var files []string
	for _, pat := range []string{"link/*/*.so", "link/*/*.exe", "gas/*/*.o", "cc/*/*/*.o", "sample/*"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", pat))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d files under testdata", len(files))
	}
	system := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}
	for _, p := range system {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("system library missing: %v", err)
		}
	}
	files = append(files, system...)
	if !testing.Short() {
		files = append(files, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1")
	}
	nread := 0
	for _, name := range files {
		f, err := elf.Open(name)
		if err != nil {
			continue // not an ELF file (sample/*.c), or LLVM 15 missing
		}
		for _, src := range []Source{EHFrame, DebugFrame} {
			one, err := read(f, src, 1)
			if errors.Is(err, ErrNoCFI) || err != nil && one == nil {
				continue
			}
			nread++
			for _, n := range []int{2, 3, 7} {
				got, err := read(f, src, n)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if d := diffFrames(one, got); d != "" {
					t.Errorf("%s %v in %d parts: %s", name, src, n, d)
				}
			}
		}
		f.Close()
	}
	if nread < 20 {
		t.Fatalf("only %d sections read", nread)
	}
}

// diffFrames describes the first difference between two reads of a
// section, "" if none.
func diffFrames(a, b *Frames) string {
	if len(a.FDEs) != len(b.FDEs) || len(a.CIEs) != len(b.CIEs) || len(a.Errors) != len(b.Errors) {
		return fmt.Sprintf("%d FDEs, %d CIEs, %d errors; want %d, %d, %d",
			len(b.FDEs), len(b.CIEs), len(b.Errors), len(a.FDEs), len(a.CIEs), len(a.Errors))
	}
	for i := range a.CIEs {
		if !reflect.DeepEqual(a.CIEs[i], b.CIEs[i]) {
			return fmt.Sprintf("CIE %d: %+v, want %+v", i, b.CIEs[i], a.CIEs[i])
		}
	}
	for i := range a.Errors {
		if a.Errors[i].Error() != b.Errors[i].Error() {
			return fmt.Sprintf("error %d: %v, want %v", i, b.Errors[i], a.Errors[i])
		}
	}
	walkedA, walkedB := map[*CIE]int{}, map[*CIE]int{}
	for i := range a.CIEs {
		walkedA[a.CIEs[i]], walkedB[b.CIEs[i]] = i, i
	}
	sameA := map[uint64]*CIE{}
	sameB := map[uint64]*CIE{}
	for i, fa := range a.FDEs {
		fb := b.FDEs[i]
		x, y := *fa, *fb
		x.CIE, y.CIE = nil, nil
		if !reflect.DeepEqual(x, y) || !reflect.DeepEqual(*fa.CIE, *fb.CIE) {
			return fmt.Sprintf("FDE %d: %+v, want %+v", i, *fb, *fa)
		}
		ia, okA := walkedA[fa.CIE]
		ib, okB := walkedB[fb.CIE]
		if okA != okB || ia != ib {
			return fmt.Sprintf("FDE %d: CIE object is walked CIE %d (%v), want %d (%v)", i, ib, okB, ia, okA)
		}
		// One object per CIE offset, in both.
		if c, ok := sameA[fa.CIE.Offset]; ok && c != fa.CIE {
			return fmt.Sprintf("one walk: two objects for the CIE at %#x", fa.CIE.Offset)
		}
		if c, ok := sameB[fb.CIE.Offset]; ok && c != fb.CIE {
			return fmt.Sprintf("FDE %d: two objects for the CIE at %#x", i, fb.CIE.Offset)
		}
		sameA[fa.CIE.Offset], sameB[fb.CIE.Offset] = fa.CIE, fb.CIE
	}
	return ""
}

// TestParseManySmallEntries reads in parts a section whose first half has
// FDEs smaller than the 32 bytes the parts' windows are sized for (so that
// the first parts outgrow them), with CIEs before and after the FDEs that
// use them and entries with errors.
func TestParseManySmallEntries(t *testing.T) {
	for _, eh := range []bool{true, false} {
		s := &secBuilder{order: binary.LittleEndian, eh: eh}
		c1 := s.simpleCIE(1, -8, 16, PEUData8, x86CIE)
		var late []int // FDEs whose CIE comes later, patched below
		for i := 0; i < 400; i++ {
			switch {
			case i%97 == 50:
				late = append(late, s.simpleFDE(c1, 0, 0x10, nil))
			case i%89 == 3:
				s.simpleFDE(len(s.b)+4096, 0x1000, 0x10, nil) // CIE pointer to nowhere
			case i == 200:
				s.simpleCIE(4, -4, 14, PEUData8, nil)
			case i > 200:
				// Big entries after small ones: the first parts outgrow
				// their windows while the whole list fits.
				s.simpleFDE(c1, uint64(0x1000+16*i), 0x10, cat([]byte{0x41, 0x0e, 16}, make([]byte, 120)))
			default:
				s.simpleFDE(c1, uint64(0x1000+16*i), 0x10, []byte{0x41, 0x0e, 16})
			}
		}
		c2 := s.simpleCIE(2, -8, 16, PEUData8, x86CIE)
		for _, off := range late {
			// Point the FDE at the last CIE (.debug_frame: an offset; .eh_frame: back from the pointer field).
			if eh {
				binary.LittleEndian.PutUint32(s.b[off+4:], uint32(off+4-c2)) // wraps: points forward
			} else {
				binary.LittleEndian.PutUint32(s.b[off+4:], uint32(c2))
			}
		}
		src := DebugFrame
		if eh {
			src = EHFrame
		}
		ptr := PointerContext{Order: binary.LittleEndian, AddrSize: 8}
		one := parseParts(s.b, src.String(), src, ptr, 1)
		if len(one.FDEs) < 300 || len(one.Errors) == 0 {
			t.Fatalf("eh %v: %d FDEs, %d errors", eh, len(one.FDEs), len(one.Errors))
		}
		for _, n := range []int{2, 3, 7} {
			if d := diffFrames(one, parseParts(s.b, src.String(), src, ptr, n)); d != "" {
				t.Errorf("eh %v, %d parts: %s", eh, n, d)
			}
		}
	}
}
