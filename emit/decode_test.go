package emit

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// example61 is the two-function x86-64 section of the reference notes,
// section 6.1 (gas output with the start fields relocated to 0 and 7).
func example61(t testing.TB) []byte {
	t.Helper()
	h := strings.Join(strings.Fields(`
		e2de 03 04 03 00 f8 00  02000000 07000000 22000000 00000000 20000000
		e4ffffffffffffff 07000000 00000000
		dbffffffffffffff 0a000000 14000000
		0400 00 00 00  00 03 08  01 05 10 f0  04 04 10 f0  06 05 08 f0
		0300 00 00 00  00 03 08  04 03 20  09 03 08`), "")
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeExample(t *testing.T) {
	sec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	fdes := []FDE{
		{StartOffset: -0x1c, Size: 7, FREOffset: 0, FREs: []FRE{
			{0, 0x03, []int32{8}}, {1, 0x05, []int32{16, -16}}, {4, 0x04, []int32{16, -16}}, {6, 0x05, []int32{8, -16}},
		}},
		{StartOffset: -0x25, Size: 10, FREOffset: 0x14, FREs: []FRE{
			{0, 0x03, []int32{8}}, {4, 0x03, []int32{32}}, {9, 0x03, []int32{8}},
		}},
	}
	want := mustSection(t, Header{Version: 3, Flags: FlagFDEFuncStartPCRel, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8}, fdes)
	if !reflect.DeepEqual(sec, want) {
		t.Errorf("Decode =\n%+v\nwant\n%+v", sec, want)
	}
	if got := functionsOf(t, sec); !reflect.DeepEqual(got, fdes) {
		t.Errorf("Functions =\n%+v\nwant\n%+v", got, fdes)
	}
	if got := sec.FuncStart(1, 0); got != 7 {
		t.Errorf("FuncStart(1, 0) = %#x, want 7", got)
	}
	if got := sec.FuncStart(0, 0x2000); got != 0x2000 {
		t.Errorf("FuncStart(0, 0x2000) = %#x, want 0x2000", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(b []byte) []byte
		want   string
	}{
		{"short preamble", func(b []byte) []byte { return b[:3] },
			"offset 0x0: section too short for the preamble (3 bytes)"},
		{"bad magic", func(b []byte) []byte { b[0] = 0; return b },
			"offset 0x0: bad magic 0x00de"},
		{"version 1", func(b []byte) []byte { b[2] = 1; return b },
			"offset 0x2: unsupported version 1"},
		{"short header", func(b []byte) []byte { return b[:20] },
			"offset 0x0: section too short for the header (20 bytes)"},
		{"v3 frame-pointer flag", func(b []byte) []byte { b[3] = 0x06; return b },
			"offset 0x3: unknown flags 0x2 for version 3"},
		{"unknown ABI", func(b []byte) []byte { b[4] = 7; return b },
			"offset 0x4: unknown ABI 7"},
		{"byte order mismatch", func(b []byte) []byte { b[4] = 4; return b },
			"offset 0x0: magic is little-endian but ABI SFRAME_ABI_S390X_ENDIAN_BIG is big-endian"},
		{"aux header past end", func(b []byte) []byte { b[7] = 0xff; return b },
			"offset 0x7: auxiliary header (255 bytes) past end of section (0x5e)"},
		{"FDE count", func(b []byte) []byte { b[8] = 3; return b },
			"offset 0x8: 3 FDEs (0x30 bytes at 0x0) overlap the FRE sub-section at 0x20"},
		{"huge FDE count", func(b []byte) []byte { copy(b[8:], []byte{0xff, 0xff, 0xff, 0xff}); return b },
			"offset 0x8: 4294967295 FDEs (0xffffffff0 bytes at 0x0) overlap the FRE sub-section at 0x20"},
		{"FDE offset past end", func(b []byte) []byte { b[20] = 0x50; return b },
			"offset 0x14: FDE sub-section offset 0x50 past end (0x42)"},
		{"FDE offset after FRE offset", func(b []byte) []byte { b[20] = 0x21; return b },
			"offset 0x8: 2 FDEs (0x20 bytes at 0x21) overlap the FRE sub-section at 0x20"},
		{"FRE offset past end", func(b []byte) []byte { b[24] = 0x43; return b },
			"offset 0x18: FRE sub-section offset 0x43 past end (0x42)"},
		{"FRE length past end", func(b []byte) []byte { b[16] = 0x23; return b },
			"offset 0x10: FRE sub-section length 0x23 past end (0x22)"},
		{"FDE FRE offset past end", func(b []byte) []byte { b[0x38], b[0x39] = 0, 0x04; return b },
			"offset 0x2c: FDE 1: FRE sub-section offset 0x400 past end (0x22)"},
		{"FDE attr past end", func(b []byte) []byte { b[0x38] = 0x1e; return b },
			"offset 0x2c: FDE 1: FRE sub-section offset 0x1e past end (0x22)"},
		{"FRE count too big", func(b []byte) []byte { b[0x3d] = 0x04; return b },
			"offset 0x41: FDE 0: 1028 FREs cannot fit in the 0x1d bytes left in the FRE sub-section"},
		{"FRE type", func(b []byte) []byte { b[0x3e] = 0x03; return b },
			"offset 0x3e: FDE 0: invalid FRE type 3"},
		{"data-word size code 3", func(b []byte) []byte { b[0x42] = 0x63; return b },
			"offset 0x42: FDE 0: FRE 0: invalid data-word size code 3"},
		{"7 data words", func(b []byte) []byte { b[0x42] = 0x0f; return b },
			"offset 0x42: FDE 0: FRE 0: 7 data words (at most 6)"},
		{"words past end", func(b []byte) []byte { b[0x5c] = 0x07; return b },
			"offset 0x5d: FDE 1: FRE 2: 3 data words of 1 bytes past the end of the FRE sub-section at 0x5e"},
		{"FRE past end", func(b []byte) []byte { b[0x50], b[12] = 0x04, 8; return b },
			"offset 0x5e: FDE 1: FRE 3 past the end of the FRE sub-section at 0x5e"},
		{"FRE count over the header's", func(b []byte) []byte { b[12] = 6; return b },
			"offset 0x55: FDE 1: 3 FREs exceed the header's FRE count"},
		{"header FRE count too big", func(b []byte) []byte { b[12] = 18; return b },
			"offset 0xc: header counts 18 FREs, the FDEs have 7"},
		{"shared FRE data leaving a gap", func(b []byte) []byte { b[0x38], b[12] = 0, 8; return b },
			"offset 0x50: bytes 0x14-0x22 of the FRE sub-section belong to no FDE"},
		{"gap at the end", func(b []byte) []byte { b[16] = 0x23; return append(b, 0) },
			"offset 0x5e: bytes 0x22-0x23 of the FRE sub-section belong to no FDE"},
		{"gap between", func(b []byte) []byte {
			// FDE 1's data moves one byte up, into the FRE sub-section's
			// last byte, made one longer.
			b = append(b[:0x50], append([]byte{0}, b[0x50:]...)...)
			b[16], b[0x38] = 0x23, 0x15
			return b
		}, "offset 0x50: bytes 0x14-0x15 of the FRE sub-section belong to no FDE"},
		{"FRE start past function end", func(b []byte) []byte { b[0x4c] = 8; return b },
			"offset 0x4c: FDE 0: FRE 3: start address 0x8 past the function size 0x7"},
		{"non-zero trailer", func(b []byte) []byte { return append(b, 0, 0, 7) },
			"offset 0x60: non-zero byte 0x07 after the FRE sub-section (only zero padding may follow it)"},
		{"FRE total", func(b []byte) []byte { b[12] = 8; return b },
			"offset 0xc: header counts 8 FREs, the FDEs have 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.mutate(example61(t))
			sec, err := Decode(b)
			if err == nil {
				t.Fatalf("Decode succeeded: %+v", sec)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err, tt.want)
			}
			if _, ok := err.(*FormatError); !ok {
				t.Errorf("error is %T, want *FormatError", err)
			}
		})
	}
}

func TestDecodeTrailerAndAux(t *testing.T) {
	b := example61(t)
	// Auxiliary header of 2 bytes: shift everything after the header.
	aux := append(append(append([]byte(nil), b[:HeaderSize]...), 0xaa, 0xbb), b[HeaderSize:]...)
	aux[7] = 2
	aux = append(aux, 0, 0, 0, 0)
	sec, err := Decode(aux)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sec.Header.AuxHeader, []byte{0xaa, 0xbb}) || !bytes.Equal(sec.Trailer, []byte{0, 0, 0, 0}) {
		t.Errorf("aux %x trailer %x", sec.Header.AuxHeader, sec.Trailer)
	}
	// The start fields are 2 bytes further from the start: same offsets,
	// starts 2 bytes later.
	if got := sec.FuncStart(1, 0); got != 9 {
		t.Errorf("FuncStart(1) = %#x, want 9", got)
	}
	enc, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, aux) {
		t.Errorf("round trip\n got %x\nwant %x", enc, aux)
	}
}
