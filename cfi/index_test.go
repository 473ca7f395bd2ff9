package cfi

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// indexWeights are the parts LowerScan cuts a section into on 2 workers.
var indexWeights = []int{4, 4, 3, 3, 2, 2, 1, 1}

// checkIndexed checks a cut of CutByIndex's: its form (from 0 to the end,
// ascending, at most one FDE per 8 bytes of a part), and, when each
// part's Scanner but the last stops at the next cut (the cuts proven, as
// LowerScan checks them), that the parts give the FDEs and errors Read
// gave (fr is Read's result). It reports whether the cuts were proven.
func checkIndexed(fr *Frames, cuts, fdes []int) (proven bool, msg string) {
	if len(cuts) != len(fdes)+1 || cuts[0] != 0 || cuts[len(cuts)-1] != len(fr.Data) {
		return false, fmt.Sprintf("cuts %v, fdes %v", cuts, fdes)
	}
	var got []FDE
	var errs []*EntryError
	proven = true
	for k := range fdes {
		if cuts[k] >= cuts[k+1] && k+1 < len(fdes) || cuts[k] > cuts[k+1] || fdes[k] > (cuts[k+1]-cuts[k])/8 {
			return false, fmt.Sprintf("part %d: cuts %v, fdes %v", k, cuts, fdes)
		}
		s := fr.Scanner(cuts[k], cuts[k+1])
		var f FDE
		for s.Next(&f) {
			got = append(got, f)
		}
		errs = append(errs, s.Errors()...)
		if k+1 < len(fdes) && s.Offset() != cuts[k+1] {
			proven = false
		}
	}
	if !proven {
		return false, ""
	}
	if msg := sameAsRead(fr, got, errs); msg != "" {
		return true, fmt.Sprintf("proven cuts %v: %s", cuts, msg)
	}
	return true, ""
}

// TestCutByIndex cuts the .eh_frame of every linked file under testdata
// (both byte orders) and of the system's big libraries by their
// .eh_frame_hdr: the cuts are proven, the parts give what Read gives, and
// each part holds the FDEs the table lists there (all but a few: libLLVM.so
// has one FDE the table leaves out).
func TestCutByIndex(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/*/*/*")
	paths = append(paths, sysfiles.CompilerLib(t, "gcc", "libc.so.6"), sysfiles.CompilerLib(t, "g++", "libstdc++.so.6"))
	if llvm := sysfiles.BigLib(t); llvm != "" {
		paths = append(paths, llvm)
	}
	indexed, big := 0, false
	for _, p := range paths {
		file, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		ef, err := elf.Open(p)
		if err != nil {
			continue
		}
		want, err := Read(ef, EHFrame)
		fr, oerr := OpenMapped(ef, EHFrame, file)
		if err != nil || oerr != nil || ef.Section(".eh_frame_hdr") == nil {
			ef.Close()
			continue
		}
		fr.FDEs, fr.CIEs, fr.Errors = want.FDEs, want.CIEs, want.Errors
		for _, weights := range [][]int{indexWeights, {1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}} {
			cuts, fdes, ok := fr.CutByIndex(weights)
			if !ok {
				t.Errorf("%s: no index", p)
				break
			}
			proven, msg := checkIndexed(fr, cuts, fdes)
			if msg != "" || !proven {
				t.Errorf("%s, %d parts: proven %v: %s", p, len(weights), proven, msg)
			}
			listed := 0
			for _, n := range fdes {
				listed += n
			}
			if listed > len(want.FDEs) || listed < len(want.FDEs)-len(want.FDEs)/1000-1 {
				t.Errorf("%s: %d FDEs listed, %d read", p, listed, len(want.FDEs))
			}
		}
		indexed++
		big = big || ef.ByteOrder == binary.BigEndian
		ef.Close()
	}
	t.Logf("%d files cut by their index", indexed)
	if indexed < 20 || !big {
		t.Errorf("%d files cut by their index (big-endian among them: %v)", indexed, big)
	}
}

// hdrFor returns an .eh_frame_hdr for a section at base bytes from it
// (the header's address minus the section's) listing the FDEs at offs.
func hdrFor(order binary.AppendByteOrder, base int64, offs []int64) []byte {
	b := []byte{1, byte(PEPCRel | PESData4), byte(PEUData4), byte(PEDataRel | PESData4)}
	b = order.AppendUint32(b, uint32(int32(-base-4)))
	b = order.AppendUint32(b, uint32(len(offs)))
	for i, off := range offs {
		b = order.AppendUint32(b, uint32(i))
		b = order.AppendUint32(b, uint32(int32(off-base)))
	}
	return b
}

// TestCutByIndexForged cuts libc's .eh_frame by tables made wrong: those
// CutByIndex cannot read give no cut; the others give cuts that checking
// proves wrong, or right ones.
func TestCutByIndexForged(t *testing.T) {
	libc := sysfiles.CompilerLib(t, "gcc", "libc.so.6")
	ef, err := elf.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	fr, err := Read(ef, EHFrame)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for _, f := range fr.FDEs {
		offs = append(offs, int64(f.Offset))
	}
	order, base := ef.ByteOrder.(binary.AppendByteOrder), int64(-0x1000)
	shifted := func(d int64) []int64 {
		var o []int64
		for _, off := range offs {
			o = append(o, off+d)
		}
		return o
	}
	half := offs[:len(offs)/2]
	same := make([]int64, len(offs))
	for i := range same {
		same[i] = offs[len(offs)/2]
	}
	for _, tc := range []struct {
		name   string
		hdr    []byte
		ok     bool // CutByIndex reads it
		proven bool // the checks prove the cuts
	}{
		{"as listed", hdrFor(order, base, offs), true, true},
		{"listed backwards", hdrFor(order, base, append(shifted(0)[len(offs)/2:], half...)), true, true},
		{"half listed", hdrFor(order, base, half), true, true},
		{"inside the entries", hdrFor(order, base, shifted(4)), true, false},
		{"one FDE listed over and over", hdrFor(order, base, same), true, true},
		{"out of the section", hdrFor(order, base, shifted(1<<30)), true, true},
		{"version 2", append([]byte{2}, hdrFor(order, base, offs)[1:]...), false, false},
		{"another encoding", append([]byte{1, 0x1b, 0x03, 0x3c}, hdrFor(order, base, offs)[4:]...), false, false},
		{"another section", hdrFor(order, base-8, offs), false, false},
		{"count past the end", hdrFor(order, base, offs)[:12+8*len(offs)-1], false, false},
		{"cut short", hdrFor(order, base, offs)[:11], false, false},
	} {
		fr.index = fdeIndex{hdr: tc.hdr, base: base, order: ef.ByteOrder}
		cuts, fdes, ok := fr.CutByIndex(indexWeights)
		if ok != tc.ok {
			t.Errorf("%s: CutByIndex ok %v", tc.name, ok)
			continue
		}
		if !ok {
			if cuts != nil || fdes != nil {
				t.Errorf("%s: not ok, but cut %v, %v", tc.name, cuts, fdes)
			}
			continue
		}
		proven, msg := checkIndexed(fr, cuts, fdes)
		if msg != "" || proven != tc.proven {
			t.Errorf("%s: proven %v, want %v: %s", tc.name, proven, tc.proven, msg)
		}
	}
}

// FuzzCutByIndex cuts arbitrary section bytes by an arbitrary table of
// FDE offsets (relative to the section): no panic, and cuts that the
// Scanners prove give what Read gives.
func FuzzCutByIndex(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/link/*/*.so")
	for _, p := range paths {
		ef, err := elf.Open(p)
		if err != nil {
			continue
		}
		if fr, err := Read(ef, EHFrame); err == nil && len(fr.FDEs) > 1 {
			var table []byte
			for i, fde := range fr.FDEs {
				table = binary.LittleEndian.AppendUint32(table, uint32(i))
				table = binary.LittleEndian.AppendUint32(table, uint32(fde.Offset+uint64(i%2)*4)) // every other one wrong
			}
			f.Add(fr.Data, table[:len(table)/2], ef.ByteOrder == binary.BigEndian)
			f.Add(fr.Data, table, ef.ByteOrder == binary.BigEndian)
		}
		ef.Close()
	}
	f.Fuzz(func(t *testing.T, data, table []byte, big bool) {
		var order interface {
			binary.ByteOrder
			binary.AppendByteOrder
		} = binary.LittleEndian
		if big {
			order = binary.BigEndian
		}
		fr, err := ReadSection(data, EHFrame, PointerContext{Order: order, AddrSize: 8, SectionAddr: 0x1000})
		if err != nil {
			t.Fatal(err)
		}
		hdr := append(hdrFor(order, 0, nil)[:8], order.AppendUint32(nil, uint32(len(table)/8))...)
		fr.index = fdeIndex{hdr: append(hdr, table...), base: 0, order: order}
		for _, weights := range [][]int{indexWeights, {1, 1, 1}} {
			cuts, fdes, ok := fr.CutByIndex(weights)
			if !ok {
				t.Fatal("no cut")
			}
			if _, msg := checkIndexed(fr, cuts, fdes); msg != "" {
				t.Fatal(msg)
			}
		}
	})
}
