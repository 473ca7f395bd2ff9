package emit

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// repeatFDEs makes about half of the FDEs of s repeat an earlier FDE's
// FRE data (its attribute fields and FREs, with a size that holds them),
// so that ShareFREs has something to share.
func repeatFDEs(r *rand.Rand, s *Section) {
	for i := 1; i < len(s.FDEs); i++ {
		if r.IntN(2) == 0 {
			continue
		}
		g := s.FDEs[r.IntN(i)]
		f := &s.FDEs[i]
		f.Info, f.Info2, f.RepSize = g.Info, g.Info2, g.RepSize
		f.FREs = slices.Clone(g.FREs)
		f.Size = max(f.Size, g.Size)
		if uint64(f.Size) >= g.FREType().Limit() {
			f.Size = g.Size
		}
	}
}

// blockBytes returns FDE i's FRE data as Encode wrote it in data.
func blockBytes(t *testing.T, data []byte, s *Section, i int) []byte {
	t.Helper()
	bo := s.Header.ABI.ByteOrder()
	freStart := HeaderSize + len(s.Header.AuxHeader) + int(bo.Uint32(data[24:]))
	f := &s.FDEs[i]
	n := 0
	if s.Header.Version == Version3 {
		n = FDEAttrSize
	}
	m, err := fdeDataSize(f, s.Header.Version == Version2)
	if err != nil {
		t.Fatal(err)
	}
	off := freStart + int(f.FREOffset)
	return data[off : off+n+m]
}

// TestShareFREs shares the repeated FRE data of random sections of every
// ABI and both versions, unpacked and (version 3) packed, and checks that
// every repeated block is written once, the section decodes to the same
// functions and FREs, the header still counts every function's FREs, and
// the bytes survive Decode and Encode.
func TestShareFREs(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	sharedSome := false
	for k := 0; k < 400; k++ {
		abi := []ABI{ABIAMD64LittleEndian, ABIAArch64LittleEndian, ABIAArch64BigEndian, ABIS390XBigEndian}[k%4]
		s := randomSection(r, abi)
		for range 3 {
			s.FDEs = append(s.FDEs, randomSection(r, abi).FDEs...)
		}
		s.Header.Version = Version3
		s.Header.Flags &^= FlagFramePointer
		if k%5 == 0 {
			s.Header.Version = Version2
		}
		for i := range s.FDEs {
			if s.Header.Version == Version2 {
				s.FDEs[i].Info2 = 0
				s.FDEs[i].StartOffset = int64(int32(s.FDEs[i].StartOffset))
			}
		}
		repeatFDEs(r, s)
		plain, err := s.Encode()
		if err != nil {
			t.Fatalf("section %d: Encode: %v", k, err)
		}
		want, err := Decode(plain)
		if err != nil {
			t.Fatalf("section %d: Decode: %v", k, err)
		}
		if _, err := s.ShareFREs(); err != nil {
			t.Fatalf("section %d: ShareFREs: %v", k, err)
		}
		shared, err := s.Encode()
		if err != nil {
			t.Fatalf("section %d: Encode shared: %v", k, err)
		}
		if n, err := s.Size(); err != nil || n != len(shared) {
			t.Fatalf("section %d: Size() = %d, %v; Encode wrote %d bytes", k, n, err, len(shared))
		}
		got, err := Decode(shared)
		if err != nil {
			t.Fatalf("section %d: Decode shared: %v\n%x", k, err, shared)
		}
		if !equalIgnoringFREOffsets(sansShared(got), want) {
			t.Fatalf("section %d: the shared section decodes to other functions", k)
		}
		bo := abi.ByteOrder()
		if bo.Uint32(shared[12:]) != bo.Uint32(plain[12:]) {
			t.Errorf("section %d: header FRE count %d, unshared %d", k, bo.Uint32(shared[12:]), bo.Uint32(plain[12:]))
		}
		// Each distinct block once; a function points at a copy of its
		// own bytes, the first.
		seen := map[string]uint32{}
		saved := 0
		for i := range got.FDEs {
			b := string(blockBytes(t, shared, got, i))
			if len(b) == 0 {
				continue
			}
			if off, ok := seen[b]; ok {
				if off != got.FDEs[i].FREOffset {
					t.Errorf("section %d: FDE %d repeats the block at %#x but points at %#x", k, i, off, got.FDEs[i].FREOffset)
				}
				saved += len(b)
				sharedSome = true
				continue
			}
			seen[b] = got.FDEs[i].FREOffset
		}
		if len(shared) != len(plain)-saved {
			t.Errorf("section %d: %d bytes shared, %d unshared, %d saved", k, len(shared), len(plain), saved)
		}
		if saved > 0 && !got.SharedFREs {
			t.Errorf("section %d: Decode did not set SharedFREs", k)
		}
		again, err := got.Encode()
		// (Version 2 keeps neither the padding nor the FRE offset of an
		// FDE without FREs.)
		if err != nil || s.Header.Version == Version3 && !bytes.Equal(again, shared) {
			t.Fatalf("section %d: Encode(Decode(shared)) differs (%v)", k, err)
		}
		if s.Header.Version == Version3 && len(s.Header.AuxHeader) == 0 {
			// A packed section (its records in index order) gives the
			// bytes of the unpacked one in that order.
			p := &Section{Header: want.Header, Trailer: want.Trailer}
			u := &Section{Header: want.Header, Trailer: want.Trailer, FDEs: slices.Clone(want.FDEs)}
			for i := range want.FDEs {
				if err := p.AppendPacked(want.FDEs[i]); err != nil {
					t.Fatalf("section %d: AppendPacked: %v", k, err)
				}
				u.FDEs[i].FREOffset = uint32(i)
			}
			if _, err := p.ShareFREs(); err != nil {
				t.Fatalf("section %d: packed ShareFREs: %v", k, err)
			}
			if _, err := u.ShareFREs(); err != nil {
				t.Fatal(err)
			}
			shared, err := u.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if b, err := p.Encode(); err != nil || !bytes.Equal(b, shared) {
				t.Fatalf("section %d: packed and shared (%v)\n got %x\nwant %x", k, err, b, shared)
			}
			// Sharing again changes nothing.
			if _, err := p.ShareFREs(); err != nil {
				t.Fatalf("section %d: packed ShareFREs again: %v", k, err)
			}
			if b, _ := p.Encode(); !bytes.Equal(b, shared) {
				t.Fatalf("section %d: packed ShareFREs twice differs", k)
			}
		}
	}
	if !sharedSome {
		t.Fatal("no section had a block to share")
	}
}

// sansShared returns s without the SharedFREs mark, for comparisons.
func sansShared(s *Section) *Section {
	c := *s
	c.SharedFREs = false
	return &c
}

// TestDecodeSharedErrors checks what Decode still refuses of FDEs that
// point into each other's data.
func TestDecodeSharedErrors(t *testing.T) {
	// Three functions, the first and third with the same FREs.
	f0 := FDE{Size: 16, Info: FuncInfo(PCInc, FREAddr1, false, false), FREs: []FRE{
		{0, FREInfo(true, 1, DataWord1B, false), []int32{8}},
		{4, FREInfo(true, 1, DataWord1B, false), []int32{16}},
	}}
	f1 := FDE{Size: 8, Info: f0.Info, FREOffset: 1, FREs: []FRE{{0, FREInfo(true, 1, DataWord1B, false), []int32{8}}}}
	f2 := f0
	f2.FREOffset = 2
	s := &Section{Header: Header{Version: Version3, Flags: FlagFDEFuncStartPCRel, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8},
		FDEs: []FDE{f0, f1, f2}}
	if _, err := s.ShareFREs(); err != nil {
		t.Fatal(err)
	}
	good, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// FRE data: FDE 0 (and 2) at 0 (5+3+3 bytes), FDE 1 at 0xb (5+3).
	if s, err := Decode(good); err != nil || !s.SharedFREs || s.FDEs[2].FREOffset != 0 || len(s.FDEs[2].FREs) != 2 {
		t.Fatalf("Decode: %v %+v", err, s)
	}
	bo := binary.LittleEndian
	entry := func(i int) int { return HeaderSize + i*FDEIndexEntrySize }
	tests := []struct {
		name   string
		mutate func(b []byte)
		want   string
	}{
		{"into another block", func(b []byte) { bo.PutUint32(b[entry(2)+12:], 2) }, "FDE 2: FRE data at 0x2 overlaps FDE 0's (0x0-0xb)"},
		{"at an FRE", func(b []byte) { bo.PutUint32(b[entry(2)+12:], 5) }, ""},
		{"shared past the size", func(b []byte) { bo.PutUint32(b[entry(2)+8:], 3) }, "FDE 2: its FREs (those of FDE 0) start up to 0x4, past the function size 0x3"},
		{"past the end", func(b []byte) { bo.PutUint32(b[entry(2)+12:], 0x20) }, "FDE 2: FRE sub-section offset 0x20 past end"},
		{"a block of none", func(b []byte) { bo.PutUint32(b[entry(1)+12:], 0) }, "bytes 0xb-0x13 of the FRE sub-section belong to no FDE"},
	}
	for _, tt := range tests {
		b := slices.Clone(good)
		tt.mutate(b)
		_, err := Decode(b)
		if err == nil {
			t.Errorf("%s: Decode succeeded", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q, want %q", tt.name, err, tt.want)
		}
	}
	// Encode refuses FDEs that share an offset but not their data.
	s.FDEs[2].FREs = s.FDEs[2].FREs[:1]
	if _, err := s.Encode(); err == nil || !strings.Contains(err.Error(), "shares FDE 0's FRE offset 0x0 but not its FRE data") {
		t.Errorf("Encode: %v", err)
	}
}
