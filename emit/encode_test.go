package emit

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestEncodeExample(t *testing.T) {
	want := example61(t)
	sec, err := Decode(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Encode\n got %x\nwant %x", got, want)
	}
}

// TestEncodeErrors checks what Encode refuses of a section's header and
// trailer, and what AppendFDE (the builder, through NewSection) refuses
// of its functions.
func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *Section, fdes []FDE)
		want   string
	}{
		{"version 1", func(s *Section, _ []FDE) { s.Header.Version = 1 }, "encode: unsupported version 1"},
		{"unknown ABI", func(s *Section, _ []FDE) { s.Header.ABI = 0 }, "encode: unknown ABI 0"},
		{"v3 frame-pointer flag", func(s *Section, _ []FDE) { s.Header.Flags |= FlagFramePointer },
			"encode: flags 0x6 not valid in version 3"},
		{"aux header", func(s *Section, _ []FDE) { s.Header.AuxHeader = make([]byte, 256) },
			"encode: auxiliary header of 256 bytes (at most 255)"},
		{"FRE type", func(_ *Section, f []FDE) { f[1].Info = 3 }, "append: FDE 1: invalid FRE type 3"},
		{"count mismatch", func(_ *Section, f []FDE) { f[0].FREs[2].Words = []int32{16} },
			"append: FDE 0: FRE 2: info byte 0x04 says 2 data words, FRE has 1"},
		{"size code 3", func(_ *Section, f []FDE) { f[0].FREs[1].Info = 0x65 },
			"append: FDE 0: FRE 1: invalid data-word size code 3"},
		{"7 words", func(_ *Section, f []FDE) {
			f[0].FREs[0].Info = FREInfo(true, 7, DataWord1B, false)
			f[0].FREs[0].Words = make([]int32, 7)
		}, "append: FDE 0: FRE 0: 7 data words (at most 6)"},
		{"word too big", func(_ *Section, f []FDE) { f[1].FREs[1].Words[0] = 256 },
			"append: FDE 1: FRE 1: data word 0 (256) does not fit 1 bytes"},
		{"word too small", func(_ *Section, f []FDE) { f[1].FREs[1].Words[0] = -129 },
			"append: FDE 1: FRE 1: data word 0 (-129) does not fit 1 bytes"},
		{"2-byte word", func(_ *Section, f []FDE) {
			f[1].FREs[1].Info = FREInfo(true, 1, DataWord2B, false)
			f[1].FREs[1].Words = []int32{70000}
		}, "append: FDE 1: FRE 1: data word 0 (70000) does not fit 2 bytes"},
		{"start address", func(_ *Section, f []FDE) { f[0].FREs[3].StartAddr = 0x100 },
			"append: FDE 0: FRE 3: start address 0x100 does not fit SFRAME_FRE_TYPE_ADDR1"},
		{"start past function end", func(_ *Section, f []FDE) { f[1].FREs[2].StartAddr = 11 },
			"append: FDE 1: FRE 2: start address 0xb past the function size 0xa"},
		{"trailer", func(s *Section, _ []FDE) { s.Trailer = []byte{0, 1} },
			"encode: trailer byte 1 is 0x01 (only zero padding may follow the FRE sub-section)"},
		{"too many FREs", func(_ *Section, f []FDE) {
			f[0].Info = FuncInfo(PCInc, FREAddr4, false, false)
			f[0].Size = 100
			f[0].FREs = make([]FRE, 65536)
		}, "append: FDE 0: 65536 FREs (at most 65535)"},
		{"v2 flex", func(s *Section, f []FDE) { s.Header.Version = 2; f[0].Info2 = 1 },
			"encode: FDE 0: info2 0x1 cannot be written in version 2"},
		{"v2 start offset", func(s *Section, f []FDE) { s.Header.Version = 2; f[1].StartOffset = 1 << 40 },
			"encode: FDE 1: start offset 0x10000000000 does not fit the 32-bit version 2 field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec, err := Decode(example61(t))
			if err != nil {
				t.Fatal(err)
			}
			fdes := functionsOf(t, dec)
			h := dec.Header
			tt.mutate(dec, fdes)
			sec, err := NewSection(h, fdes)
			if err == nil {
				sec.Header, sec.Trailer = dec.Header, dec.Trailer
				var b []byte
				if b, err = sec.Encode(); err == nil {
					t.Fatalf("Encode succeeded: %x", b)
				}
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err, tt.want)
			}
		})
	}
	// Unsigned-range words (control words built by a producer) encode the
	// same bytes as their sign-extended form.
	dec, _ := Decode(example61(t))
	fdes := functionsOf(t, dec)
	fdes[1].FREs[1].Words[0] = 0x89
	b, err := mustSection(t, dec.Header, fdes).Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := Decode(b)
	if got := functionsOf(t, d)[1].FREs[1].Words[0]; got != -119 {
		t.Errorf("0x89 decoded as %d, want -119", got)
	}
}

func TestEncodeVersion2(t *testing.T) {
	dec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	h := dec.Header
	h.Version = Version2
	h.Flags |= FlagFramePointer
	fdes := functionsOf(t, dec)
	fdes[0].RepSize = 16
	sec := mustSection(t, h, fdes)
	b, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// Header, 2 FDEs of 20 bytes, FREs without attribute records.
	if want := HeaderSize + 2*FDEEntrySizeV2 + 0x22 - 2*FDEAttrSize; len(b) != want {
		t.Fatalf("size %d, want %d", len(b), want)
	}
	if off := binary.LittleEndian.Uint32(b[HeaderSize+FDEEntrySizeV2+8:]); off != 0x0f {
		t.Errorf("FDE 1 FRE offset %#x, want 0xf", off)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d, sec) {
		t.Errorf("Decode(Encode(v2)) =\n%+v\nwant\n%+v", d, sec)
	}
	// The start fields are relative to 20-byte entries.
	if got := d.FuncStart(1, 0); got != 0x7+0x14-0x10 {
		t.Errorf("FuncStart(1) = %#x", got)
	}
}

// TestSize checks that Size is the length of Encode's bytes, for every
// section ld made under testdata/link, in both versions, with an auxiliary
// header and a trailer, and that it reports an FRE offset past the data.
func TestSize(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "*", "*.sframe"))
	if len(files) < 3 {
		t.Fatalf("found %d .sframe files under testdata/link", len(files))
	}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sec, err := Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, mut := range []func(*Section){
			func(*Section) {},
			func(s *Section) { s.Header.AuxHeader = []byte{1, 2, 3}; s.Trailer = make([]byte, 5) },
			func(s *Section) { s.Header.Version = Version2; s.Header.AuxHeader = nil; s.Trailer = nil },
		} {
			s := *sec
			mut(&s)
			b, err := s.Encode()
			if err != nil {
				if _, serr := s.Size(); serr == nil || serr.Error() != err.Error() {
					t.Errorf("%s: Encode error %v, Size error %v", name, err, serr)
				}
				continue // flex FDEs in version 2
			}
			if n, err := s.Size(); err != nil || n != len(b) {
				t.Errorf("%s (version %d): Size() = %d, %v; Encode wrote %d bytes", name, s.Header.Version, n, err, len(b))
			}
		}
	}
	sec, _ := Decode(example61(t))
	sec.Index[1].FREOffset = uint32(len(sec.FREData))
	if _, err := sec.Size(); err == nil || !strings.Contains(err.Error(), "past the FRE data") {
		t.Errorf("Size of a section with an FRE offset past the data: %v", err)
	}
}

// functionsOf returns the functions of s with their FREs (Functions).
func functionsOf(t testing.TB, s *Section) []FDE {
	t.Helper()
	fdes, err := s.Functions()
	if err != nil {
		t.Fatal(err)
	}
	return fdes
}

// mustSection returns NewSection(h, fdes), failing t on an error.
func mustSection(t testing.TB, h Header, fdes []FDE) *Section {
	t.Helper()
	s, err := NewSection(h, fdes)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// setVersion2 makes s a version 2 section keeping every function's
// absolute start (the start fields are relative to 20-byte FDEs).
func setVersion2(s *Section) error {
	starts := make([]uint64, s.NumFDEs())
	for i := range starts {
		starts[i] = s.FuncStart(i, 0)
	}
	h := s.Header
	s.Header.Version = Version2
	for i := range starts {
		s.SetFuncStart(i, starts[i], 0)
	}
	if _, err := s.Encode(); err != nil {
		s.Header = h
		for i := range starts {
			s.SetFuncStart(i, starts[i], 0)
		}
		return err
	}
	return nil
}
