package cfi

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"testing"
)

// openWithTable opens the .eh_frame of the file at path from its bytes
// (OpenMapped, which takes .eh_frame_hdr's table) and reads it (Read's
// Frames, to compare with), or skips when the file is missing.
func openWithTable(t *testing.T, path string) (mapped, read *Frames) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("%s: %v", path, err)
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if mapped, err = OpenMapped(ef, EHFrame, data); err != nil {
		t.Fatal(err)
	}
	if read, err = Read(ef, EHFrame); err != nil {
		t.Fatal(err)
	}
	if len(mapped.table) == 0 {
		t.Fatalf("%s: no .eh_frame_hdr table", path)
	}
	return mapped, read
}

// TestCutTable checks CutWeighted's two walks at once, from the FDE
// .eh_frame_hdr's table gives near the middle: the parts scan as Read
// reads, the middle part starts at that FDE, and the other parts where
// the walk alone cuts them.
func TestCutTable(t *testing.T) {
	for _, path := range []string{"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"} {
		fr, ref := openWithTable(t, path)
		for _, weights := range [][]int{{1, 1}, {4, 4, 3, 3, 2, 2, 1, 1}, {1, 1, 1}, {5, 0, 5, 7}} {
			what := fmt.Sprintf("%s, weights %v", path, weights)
			cuts, fdes := fr.cutWeighted(weights, 0)
			if msg := compareParts(ref, len(weights), cuts, fdes); msg != "" {
				t.Errorf("%s: %s", what, msg)
				continue
			}
			serial, serialFDEs := fr.cutWeighted(weights, len(fr.Data)+1)
			// The middle part starts at the FDE of the table; the
			// others as the walk alone cuts them.
			m := len(weights) / 2
			_, bounds := fr.bounds(weights)
			mid, _ := fr.entryNear(bounds[m])
			if len(cuts) != len(serial) || cuts[m] != mid {
				t.Errorf("%s: cuts %v, the middle part not at %#x (serial %v)", what, cuts, mid, serial)
				continue
			}
			for k := range cuts {
				if k != m && cuts[k] != serial[k] {
					t.Errorf("%s: cuts %v, serial %v", what, cuts, serial)
				}
			}
			// The FDEs of the parts on either side of the middle add up
			// to the serial walk's.
			if fdes[m-1]+fdes[m] != serialFDEs[m-1]+serialFDEs[m] {
				t.Errorf("%s: FDEs %v, serial %v", what, fdes, serialFDEs)
			}
		}
	}
}

// TestCutHostileTable checks that CutWeighted cuts where Read reads
// whatever the table says: an FDE's offset plus one (inside it, where an
// entry seems to start or not), a CIE's, the last FDE's (far past the
// middle), 0, the section's end and past it, in a table of nothing but
// one of those; only a real entry starts a part, and no part is empty.
func TestCutHostileTable(t *testing.T) {
	fr, ref := openWithTable(t, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
	if len(ref.CIEs) == 0 || len(ref.FDEs) < 100 {
		t.Fatal("libstdc++: too few entries")
	}
	entries := map[int]bool{}
	for _, f := range ref.FDEs {
		entries[int(f.Offset)] = true
	}
	for _, c := range ref.CIEs {
		entries[int(c.Offset)] = true
	}
	mid := int(ref.FDEs[len(ref.FDEs)/2].Offset)
	last := int(ref.FDEs[len(ref.FDEs)-1].Offset)
	for _, at := range []int{mid + 1, mid + 4, mid + 8, int(ref.CIEs[len(ref.CIEs)-1].Offset), last, 0, len(fr.Data), len(fr.Data) + 16, -8} {
		// Every entry of the table says at.
		table := make([]byte, 8*64)
		for i := 0; i < len(table); i += 8 {
			binary.LittleEndian.PutUint32(table[i:], uint32(i))
			binary.LittleEndian.PutUint32(table[i+4:], uint32(int32(int64(fr.Address)+int64(at)-int64(fr.tableAddr))))
		}
		hostile := *fr
		hostile.table = table
		for _, weights := range [][]int{{1, 1}, {4, 4, 3, 3, 2, 2, 1, 1}} {
			cuts, fdes := hostile.cutWeighted(weights, 0)
			if msg := compareParts(ref, len(weights), cuts, fdes); msg != "" {
				t.Errorf("table at %#x, weights %v: %s", at, weights, msg)
			}
			if slices.Contains(cuts[:len(cuts)-1], at) && !entries[at] {
				t.Errorf("table at %#x (no entry), weights %v: a part starts there: %v", at, weights, cuts)
			}
			for k := 1; k < len(cuts); k++ {
				if cuts[k] <= cuts[k-1] {
					t.Errorf("table at %#x, weights %v: an empty part: %v", at, weights, cuts)
				}
			}
		}
	}
}
