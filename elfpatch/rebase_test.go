package elfpatch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestRebase moves gas sections (made position-dependent by hand) and
// checks through emit that every function start is unchanged.
func TestRebase(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/gas/*/*.gs.sframe")
	if len(paths) == 0 {
		t.Fatal("no testdata/gas/*/*.gs.sframe")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := emit.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		const oldAddr, newAddr = 0x402000, 0x1234568
		got, err := rebase(b, oldAddr, newAddr)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		r, err := emit.Decode(got)
		if err != nil {
			t.Fatalf("%s: rebased: %v", p, err)
		}
		for i := range s.Index {
			if a, b := s.FuncStart(i, oldAddr), r.FuncStart(i, newAddr); a != b {
				t.Errorf("%s: FDE %d starts at %#x after rebase, want %#x", p, i, b, a)
			}
		}
		back, _ := rebase(got, newAddr, oldAddr)
		if !bytes.Equal(back, b) {
			t.Errorf("%s: rebase there and back differs", p)
		}
	}
	if _, err := rebase([]byte("short"), 0, 0); err == nil {
		t.Error("no error for a short section")
	}
}

func FuzzRebase(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/gas/*/*.gs.sframe")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := rebase(b, 0x1000, 0x2000)
		if err == nil && len(out) != len(b) {
			t.Fatal("size changed")
		}
	})
}

// rebase (the tests' own: patching takes no section from elsewhere)
// returns a copy of the SFrame section sframe (version 2 or 3),
// which was valid at address oldAddr, adjusted to be loaded at newAddr.
//
// Function start fields are relative to the field itself (flag
// FDE_FUNC_START_PCREL) or to the section start; either way moving the
// section by d changes every field by -d. Nothing else in a section depends
// on its address. Byte order comes from the magic.
func rebase(sframe []byte, oldAddr, newAddr uint64) ([]byte, error) {
	if len(sframe) < 28 {
		return nil, fmt.Errorf("SFrame section: %d bytes, shorter than the 28-byte header", len(sframe))
	}
	var o binary.ByteOrder
	switch {
	case sframe[0] == 0xe2 && sframe[1] == 0xde:
		o = binary.LittleEndian
	case sframe[0] == 0xde && sframe[1] == 0xe2:
		o = binary.BigEndian
	default:
		return nil, fmt.Errorf("SFrame section: bad magic %#02x%02x", sframe[0], sframe[1])
	}
	ver := sframe[2]
	var esz, fieldSize uint64
	switch ver {
	case 2:
		esz, fieldSize = 20, 4
	case 3:
		esz, fieldSize = 16, 8
	default:
		return nil, fmt.Errorf("SFrame section: version %d, want 2 or 3", ver)
	}
	aux := uint64(sframe[7])
	nfdes := uint64(o.Uint32(sframe[8:]))
	fdeoff := uint64(o.Uint32(sframe[20:]))
	base := 28 + aux + fdeoff
	if base > uint64(len(sframe)) || nfdes > (uint64(len(sframe))-base)/esz {
		return nil, fmt.Errorf("SFrame section: %d FDEs at offset %#x do not fit in %d bytes", nfdes, base, len(sframe))
	}
	out := append([]byte(nil), sframe...)
	d := oldAddr - newAddr
	for i := uint64(0); i < nfdes; i++ {
		f := out[base+i*esz:]
		if fieldSize == 8 {
			o.PutUint64(f, o.Uint64(f)+d)
			continue
		}
		v := int64(int32(o.Uint32(f))) + int64(d)
		if v != int64(int32(v)) {
			return nil, fmt.Errorf("SFrame section: FDE %d start offset %#x does not fit in 32 bits at address %#x", i, v, newAddr)
		}
		o.PutUint32(f, uint32(v))
	}
	return out, nil
}
