package emit

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// TestEncodeFREOrder checks that FRE data follows FREOffset order, ties in
// index order, whatever the index order.
func TestEncodeFREOrder(t *testing.T) {
	sec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	a, b := sec.FDEs[0], sec.FDEs[1]
	tests := []struct {
		name       string
		offA, offB uint32
		wantA      uint32 // resulting FRE offsets
		wantB      uint32
	}{
		{"index order", 0, 0x14, 0, 0x14},
		{"ties", 5, 5, 0, 0x14},
		{"reversed", 9, 3, 0x0e, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.FREOffset, b.FREOffset = tt.offA, tt.offB
			s := &Section{Header: sec.Header, FDEs: []FDE{a, b}}
			enc, err := s.Encode()
			if err != nil {
				t.Fatal(err)
			}
			d, err := Decode(enc)
			if err != nil {
				t.Fatal(err)
			}
			if d.FDEs[0].FREOffset != tt.wantA || d.FDEs[1].FREOffset != tt.wantB {
				t.Errorf("FRE offsets %#x %#x, want %#x %#x", d.FDEs[0].FREOffset, d.FDEs[1].FREOffset, tt.wantA, tt.wantB)
			}
			if !reflect.DeepEqual(d.FDEs[0].FREs, a.FREs) || !reflect.DeepEqual(d.FDEs[1].FREs, b.FREs) {
				t.Errorf("FREs changed")
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *Section)
		want   string
	}{
		{"version 1", func(s *Section) { s.Header.Version = 1 }, "encode: unsupported version 1"},
		{"unknown ABI", func(s *Section) { s.Header.ABI = 0 }, "encode: unknown ABI 0"},
		{"v3 frame-pointer flag", func(s *Section) { s.Header.Flags |= FlagFramePointer },
			"encode: flags 0x6 not valid in version 3"},
		{"aux header", func(s *Section) { s.Header.AuxHeader = make([]byte, 256) },
			"encode: auxiliary header of 256 bytes (at most 255)"},
		{"FRE type", func(s *Section) { s.FDEs[1].Info = 3 }, "encode: FDE 1: invalid FRE type 3"},
		{"count mismatch", func(s *Section) { s.FDEs[0].FREs[2].Words = []int32{16} },
			"encode: FDE 0: FRE 2: info byte 0x04 says 2 data words, FRE has 1"},
		{"size code 3", func(s *Section) { s.FDEs[0].FREs[1].Info = 0x65 },
			"encode: FDE 0: FRE 1: invalid data-word size code 3"},
		{"7 words", func(s *Section) {
			s.FDEs[0].FREs[0].Info = FREInfo(true, 7, DataWord1B, false)
			s.FDEs[0].FREs[0].Words = make([]int32, 7)
		}, "encode: FDE 0: FRE 0: 7 data words (at most 6)"},
		{"word too big", func(s *Section) { s.FDEs[1].FREs[1].Words[0] = 256 },
			"encode: FDE 1: FRE 1: data word 0 (256) does not fit 1 bytes"},
		{"word too small", func(s *Section) { s.FDEs[1].FREs[1].Words[0] = -129 },
			"encode: FDE 1: FRE 1: data word 0 (-129) does not fit 1 bytes"},
		{"2-byte word", func(s *Section) {
			s.FDEs[1].FREs[1].Info = FREInfo(true, 1, DataWord2B, false)
			s.FDEs[1].FREs[1].Words[0] = 70000
		}, "encode: FDE 1: FRE 1: data word 0 (70000) does not fit 2 bytes"},
		{"start address", func(s *Section) { s.FDEs[0].FREs[3].StartAddr = 0x100 },
			"encode: FDE 0: FRE 3: start address 0x100 does not fit SFRAME_FRE_TYPE_ADDR1"},
		{"start past function end", func(s *Section) { s.FDEs[1].FREs[2].StartAddr = 11 },
			"encode: FDE 1: FRE 2: start address 0xb past the function size 0xa"},
		{"trailer", func(s *Section) { s.Trailer = []byte{0, 1} },
			"encode: trailer byte 1 is 0x01 (only zero padding may follow the FRE sub-section)"},
		{"too many FREs", func(s *Section) {
			s.FDEs[0].Info = FuncInfo(PCInc, FREAddr4, false, false)
			s.FDEs[0].Size = 100
			s.FDEs[0].FREs = make([]FRE, 65536)
		}, "encode: FDE 0: 65536 FREs (at most 65535)"},
		{"v2 flex", func(s *Section) { s.Header.Version = 2; s.FDEs[0].Info2 = 1 },
			"encode: FDE 0: info2 0x1 cannot be written in version 2"},
		{"v2 start offset", func(s *Section) { s.Header.Version = 2; s.FDEs[1].StartOffset = 1 << 40 },
			"encode: FDE 1: start offset 0x10000000000 does not fit the 32-bit version 2 field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec, err := Decode(example61(t))
			if err != nil {
				t.Fatal(err)
			}
			tt.mutate(sec)
			b, err := sec.Encode()
			if err == nil {
				t.Fatalf("Encode succeeded: %x", b)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err, tt.want)
			}
		})
	}
	// Unsigned-range words (control words built by a producer) encode the
	// same bytes as their sign-extended form.
	sec, _ := Decode(example61(t))
	sec.FDEs[1].FREs[1].Words[0] = 0x89
	b, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := Decode(b)
	if got := d.FDEs[1].FREs[1].Words[0]; got != -119 {
		t.Errorf("0x89 decoded as %d, want -119", got)
	}
}

func TestEncodeVersion2(t *testing.T) {
	sec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	sec.Header.Version = Version2
	sec.Header.Flags |= FlagFramePointer
	sec.FDEs[0].RepSize = 16
	b, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// Header, 2 FDEs of 20 bytes, FREs without attribute records.
	if want := HeaderSize + 2*FDEEntrySizeV2 + 0x22 - 2*FDEAttrSize; len(b) != want {
		t.Fatalf("size %d, want %d", len(b), want)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if d.FDEs[1].FREOffset != 0x0f {
		t.Errorf("FDE 1 FRE offset %#x, want 0xf", d.FDEs[1].FREOffset)
	}
	sec.FDEs[1].FREOffset = 0x0f
	if !reflect.DeepEqual(d, sec) {
		t.Errorf("Decode(Encode(v2)) =\n%+v\nwant\n%+v", d, sec)
	}
	// The start fields are relative to 20-byte entries.
	if got := d.FuncStart(1, 0); got != 0x7+0x14-0x10 {
		t.Errorf("FuncStart(1) = %#x", got)
	}
}

// TestSortByStart checks SortByStart on an unpacked section and on a
// packed one (whose functions are in Index): the order by start, ties in
// input order, the start fields for the new positions.
func TestSortByStart(t *testing.T) {
	starts := []uint64{0x1060, 0x1000, 0x1100, 0x1000, 0x0f00}
	for _, packed := range []bool{false, true} {
		sec := &Section{Header: Header{Version: 3, Flags: FlagFDEFuncStartPCRel, ABI: ABIAMD64LittleEndian}}
		for i, a := range starts {
			f := FDE{Size: uint32(i + 1), Info: FuncInfo(PCInc, FREAddr1, false, false), FREOffset: uint32(i)}
			if packed {
				if err := sec.AppendPacked(f); err != nil {
					t.Fatal(err)
				}
			} else {
				sec.FDEs = append(sec.FDEs, f)
			}
			sec.SetFuncStart(i, a, 0x2000)
		}
		sec.SortByStart(0x2000)
		if packed && len(sec.FDEs) != 0 || sec.NumFDEs() != len(starts) {
			t.Fatalf("packed %v: %d FDEs, %d index entries", packed, len(sec.FDEs), len(sec.Index))
		}
		wantSizes := []uint32{5, 2, 4, 1, 3} // ties (0x1000) in input order
		for i, want := range wantSizes {
			size := uint32(0)
			if packed {
				size = sec.Index[i].Size
			} else {
				size = sec.FDEs[i].Size
			}
			if size != want {
				t.Errorf("packed %v: FDE %d is the input FDE %d, want %d", packed, i, size-1, want-1)
			}
			if got, want := sec.FuncStart(i, 0x2000), starts[want-1]; got != want {
				t.Errorf("packed %v: FDE %d starts at %#x, want %#x", packed, i, got, want)
			}
		}
		if sec.Header.Flags != FlagFDESorted|FlagFDEFuncStartPCRel {
			t.Errorf("packed %v: flags %v", packed, sec.Header.Flags)
		}
	}
}

// TestSortByStartLinked undoes ld's sort of each linked golden section by
// shuffling its FDE index, then checks SortByStart and Encode give ld's
// bytes back.
func TestSortByStartLinked(t *testing.T) {
	n, ties := 0, 0
	for _, g := range goldenFiles(t) {
		if strings.HasSuffix(g.elf, ".o") {
			continue
		}
		raw, _, addr, ok := sframeOf(t, g.elf)
		if !ok {
			continue
		}
		sec, err := Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", g.elf, err)
		}
		if sec.Header.Flags&FlagFDESorted == 0 {
			continue
		}
		n++
		abs := make([]uint64, len(sec.FDEs))
		for i := range sec.FDEs {
			abs[i] = sec.FuncStart(i, addr)
		}
		// ld inserts FDEs in the order of their FRE data; with ties, only
		// that order tells which comes first (glibc's qsort is a stable
		// merge sort).
		perm := rand.New(rand.NewPCG(1, uint64(len(raw)))).Perm(len(sec.FDEs))
		if hasTies(sec) {
			ties++
			slices.SortFunc(perm, func(a, b int) int { return cmpU32(sec.FDEs[a].FREOffset, sec.FDEs[b].FREOffset) })
		}
		shuffled := &Section{Header: sec.Header, Trailer: sec.Trailer, FDEs: make([]FDE, len(sec.FDEs))}
		shuffled.Header.Flags &^= FlagFDESorted
		for i, p := range perm {
			shuffled.FDEs[i] = sec.FDEs[p]
			shuffled.SetFuncStart(i, abs[p], addr)
		}
		shuffled.SortByStart(addr)
		enc, err := shuffled.Encode()
		if err != nil {
			t.Fatalf("%s: %v", g.elf, err)
		}
		if !bytes.Equal(enc, raw) {
			t.Errorf("%s: SortByStart of the shuffled index differs from ld's output (ties: %v)", g.elf, hasTies(sec))
		}
	}
	if n == 0 {
		t.Fatal("no sorted linked golden section")
	}
	t.Logf("%d sorted sections, %d with equal starts", n, ties)
}

func hasTies(sec *Section) bool {
	for i := 1; i < len(sec.FDEs); i++ {
		if sec.FuncStart(i, 0) == sec.FuncStart(i-1, 0) {
			return true
		}
	}
	return false
}

func TestSetVersion(t *testing.T) {
	sec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{sec.FuncStart(0, 0x4000), sec.FuncStart(1, 0x4000)}
	if err := sec.SetVersion(Version2); err != nil {
		t.Fatal(err)
	}
	b, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	v2, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if got := v2.FuncStart(i, 0x4000); got != w || v2.Header.Version != Version2 {
			t.Errorf("v2 FDE %d starts at %#x, want %#x", i, got, w)
		}
	}
	if err := v2.SetVersion(Version3); err != nil {
		t.Fatal(err)
	}
	b3, err := v2.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b3, example61(t)) {
		t.Errorf("v3 -> v2 -> v3 changed the bytes\n got %x\nwant %x", b3, example61(t))
	}
	v2.FDEs[1].Info2 = uint8(FDEFlex)
	if err := v2.SetVersion(Version2); err == nil || err.Error() != "FDE 1: SFRAME_FDE_TYPE_FLEX cannot be written in version 2" {
		t.Errorf("flex to v2: %v", err)
	}
	if v2.Header.Version != Version3 {
		t.Errorf("failed SetVersion changed the version")
	}
}

// TestSize checks that Size is the length of Encode's bytes, for every
// section ld made under testdata/link, in both versions, with an auxiliary
// header and a trailer, and that it reports Encode's FRE errors.
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
	sec.FDEs[1].FREs[1].Words[0] = 256
	if _, err := sec.Size(); err == nil || !strings.Contains(err.Error(), "does not fit 1 bytes") {
		t.Errorf("Size of a section with a word too big: %v", err)
	}
}
