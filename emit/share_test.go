package emit

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// repeatFDEs makes about half of fdes repeat an earlier FDE's FRE data
// (its attribute fields and FREs, with a size that holds them), so that
// ShareFREs has something to share.
func repeatFDEs(r *rand.Rand, fdes []FDE) {
	for i := 1; i < len(fdes); i++ {
		if r.IntN(2) == 0 {
			continue
		}
		copyRecord(&fdes[i], fdes[r.IntN(i)])
	}
}

// copyRecord gives f g's FRE data (its attribute fields and FREs, with a
// size that holds them).
func copyRecord(f *FDE, g FDE) {
	f.Info, f.Info2, f.RepSize = g.Info, g.Info2, g.RepSize
	f.FREs = slices.Clone(g.FREs)
	f.Size = max(f.Size, g.Size)
	if uint64(f.Size) >= g.FREType().Limit() {
		f.Size = g.Size
	}
}

// sansOffsets returns the functions of s without their FRE offsets.
func sansOffsets(t *testing.T, s *Section) []FDE {
	fdes := functionsOf(t, s)
	for i := range fdes {
		fdes[i].FREOffset = 0
	}
	return fdes
}

// TestShareFREs shares the repeated FRE data of random sections of every
// ABI and both versions and checks that every repeated record is written
// once, the section decodes to the same functions and FREs, the header
// still counts every function's FREs, the bytes survive Decode and
// Encode, sharing again changes nothing, and a section whose index is not
// in the order of its records shares the same.
func TestShareFREs(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	sharedSome := false
	for k := 0; k < 400; k++ {
		abi := []ABI{ABIAMD64LittleEndian, ABIAArch64LittleEndian, ABIAArch64BigEndian, ABIS390XBigEndian}[k%4]
		draft, fdes := randomDraft(r, abi)
		for range 3 {
			_, more := randomDraft(r, abi)
			fdes = append(fdes, more...)
		}
		h := &draft.Header
		h.Version = Version3
		h.Flags &^= FlagFramePointer
		v2 := k%5 == 0
		if v2 {
			h.Version = Version2
			for i := range fdes {
				fdes[i].Info2 = 0
				fdes[i].StartOffset = int64(int32(fdes[i].StartOffset))
			}
		}
		repeatFDEs(r, fdes)
		s := buildDraft(draft, fdes)
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
		if !reflect.DeepEqual(sansOffsets(t, got), sansOffsets(t, want)) {
			t.Fatalf("section %d: the shared section decodes to other functions", k)
		}
		bo := abi.ByteOrder()
		if bo.Uint32(shared[12:]) != bo.Uint32(plain[12:]) {
			t.Errorf("section %d: header FRE count %d, unshared %d", k, bo.Uint32(shared[12:]), bo.Uint32(plain[12:]))
		}
		saved := checkSharedOnce(t, k, got, bo, v2)
		sharedSome = sharedSome || saved > 0
		if len(shared) != len(plain)-saved {
			t.Errorf("section %d: %d bytes shared, %d unshared, %d saved", k, len(shared), len(plain), saved)
		}
		if saved > 0 && !got.Shares() {
			t.Errorf("section %d: Shares false after Decode", k)
		}
		if again, err := got.Encode(); err != nil || !bytes.Equal(again, shared) {
			t.Fatalf("section %d: Encode(Decode(shared)) differs (%v)", k, err)
		}
		// Sharing again changes nothing.
		if _, err := s.ShareFREs(); err != nil {
			t.Fatalf("section %d: ShareFREs again: %v", k, err)
		}
		if b, _ := s.Encode(); !bytes.Equal(b, shared) {
			t.Fatalf("section %d: ShareFREs twice differs", k)
		}
		// The index reversed (its records then in the other order)
		// shares the same records.
		slices.Reverse(want.Index)
		if _, err := want.ShareFREs(); err != nil {
			t.Fatalf("section %d: ShareFREs of the reversed index: %v", k, err)
		}
		slices.Reverse(want.Index)
		if b, err := want.Encode(); err != nil || !bytes.Equal(b, shared) {
			t.Fatalf("section %d: reversed and shared (%v)\n got %x\nwant %x", k, err, b, shared)
		}
	}
	if !sharedSome {
		t.Fatal("no section had a block to share")
	}
}

// checkSharedOnce checks that the shared section got holds each distinct
// record once, every function pointing at the first copy of its own
// bytes (version 2 shares no record without FREs: each has its own
// offset), and returns the bytes the copies left out would take.
func checkSharedOnce(t *testing.T, k int, got *Section, bo binary.ByteOrder, v2 bool) (saved int) {
	t.Helper()
	seen := map[string]uint32{}
	for i := range got.Index {
		off := got.Index[i].FREOffset
		n, nFREs, _, err := recordLen(got.FREData, int(off), bo)
		if err != nil {
			t.Fatal(err)
		}
		if v2 && nFREs == 0 {
			continue
		}
		b := string(got.FREData[off : int(off)+n])
		if first, ok := seen[b]; ok {
			if first != off {
				t.Errorf("section %d: FDE %d repeats the record at %#x but points at %#x", k, i, first, off)
			}
			saved += n
			if v2 {
				saved -= FDEAttrSize
			}
			continue
		}
		seen[b] = off
	}
	return saved
}

// TestShareFREsGrows shares sections big enough for the table of
// distinct records to grow several times (from 64 slots, at half
// full), in one go and in steps (FRESharer, as lower shares the parts of
// a section): a record is found again after any growth, so each is kept
// once.
func TestShareFREsGrows(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 2))
	for k, abi := range []ABI{ABIAMD64LittleEndian, ABIS390XBigEndian} {
		draft, fdes := randomDraft(r, abi)
		for len(fdes) < 6000 {
			_, more := randomDraft(r, abi)
			fdes = append(fdes, more...)
		}
		draft.Header.Version = Version3
		draft.Header.Flags &^= FlagFramePointer
		// Distinct records d, then: d[0] twice (so that the records
		// after it move down as they are shared), every other one once,
		// and each of them again: the record whose insertion grows the
		// table is met again too.
		var d []FDE
		keys := map[string]bool{}
		for _, f := range fdes {
			key := fmt.Sprint(f.Info, f.Info2, f.RepSize, f.FREs)
			if !keys[key] && 2*len(d)+1 < len(fdes) {
				keys[key] = true
				d = append(d, f)
			}
		}
		fdes = fdes[:2*len(d)+1]
		copyRecord(&fdes[0], d[0])
		copyRecord(&fdes[1], d[0])
		for i := 1; i < len(d); i++ {
			copyRecord(&fdes[1+i], d[i])
		}
		for i := range d {
			copyRecord(&fdes[1+len(d)+i], d[i])
		}
		if len(d) < 2048 {
			t.Fatalf("section %d: %d distinct records, want enough to grow the table twice", k, len(d))
		}
		for _, c := range []struct {
			steps int
			// Each part given to Append: in the section's array past
			// its end (inPlace) or in an array of its own.
			appended, inPlace bool
		}{{1, false, false}, {7, false, false},
			{1, true, false}, {7, true, false}, {7, true, true}} {
			steps := c.steps
			s := buildDraft(draft, fdes)
			plain, err := s.Encode()
			if err != nil {
				t.Fatal(err)
			}
			// The section in steps: the functions appended a part at
			// a time, each part shared as it joins.
			all := s.Index
			sh := NewFRESharer(len(all))
			if c.appended {
				appendParts(t, sh, s, steps, c.inPlace)
			}
			for p := 1; p <= steps && !c.appended; p++ {
				s.Index = all[:len(all)*p/steps]
				end := len(s.FREData)
				if len(s.Index) < len(all) {
					end = int(all[len(s.Index)].FREOffset)
				}
				fre := s.FREData
				s.FREData = fre[:end]
				if _, err := sh.Share(s); err != nil {
					t.Fatalf("section %d, part %d of %d: %v", k, p, steps, err)
				}
				if len(s.Index) < len(all) {
					// The next part's records follow the shared ones.
					next := fre[end:]
					at := len(s.FREData)
					s.FREData = append(s.FREData, next...)
					for i := len(s.Index); i < len(all); i++ {
						all[i].FREOffset = all[i].FREOffset - uint32(end) + uint32(at)
					}
				}
			}
			shared, err := s.Encode()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(shared)
			if err != nil {
				t.Fatal(err)
			}
			saved := checkSharedOnce(t, k, got, abi.ByteOrder(), false)
			if saved == 0 || len(shared) != len(plain)-saved {
				t.Errorf("section %d in %d steps (appended: %v, in place: %v): %d bytes shared, %d unshared, %d saved",
					k, steps, c.appended, c.inPlace, len(shared), len(plain), saved)
			}
		}
	}
}

// appendParts empties s and gives its functions back to sh.Append in
// steps parts, each part's index with the offsets of its own records:
// those records in s's FRE data array past what is appended (inPlace, as
// lower's workers leave them), or in an array of their own.
func appendParts(t *testing.T, sh *FRESharer, s *Section, steps int, inPlace bool) {
	t.Helper()
	all, fre := s.Index, s.FREData
	s.Index, s.FREData = nil, fre[:0]
	if !inPlace {
		s.FREData = nil
	}
	for p := range steps {
		lo, hi := len(all)*p/steps, len(all)*(p+1)/steps
		start, end := int(all[lo].FREOffset), len(fre)
		if hi < len(all) {
			end = int(all[hi].FREOffset)
		}
		index := slices.Clone(all[lo:hi])
		for i := range index {
			index[i].FREOffset -= uint32(start)
		}
		data := fre[start:end]
		if !inPlace {
			data = slices.Clone(data)
		}
		s.Index = append(s.Index, index...)
		if _, err := sh.Append(s, len(index), data); err != nil {
			t.Fatalf("part %d of %d: %v", p, steps, err)
		}
	}
	if len(s.Index) != len(all) {
		t.Fatalf("%d functions appended, want %d", len(s.Index), len(all))
	}
}

// TestNewFRESharer checks the size of the table NewFRESharer starts with
// for n functions: a power of two, at least 64, about n/2.
func TestNewFRESharer(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 64}, {100, 64}, {130, 128}, {2048, 1024}, {2050, 2048}, {160805, 131072}} {
		if sh := NewFRESharer(c.n); len(sh.t.slots) != c.want {
			t.Errorf("NewFRESharer(%d): table of %d slots, want %d", c.n, len(sh.t.slots), c.want)
		}
	}
}

// TestDecodeSharedErrors checks what Decode still refuses of FDEs that
// point into each other's data.
func TestDecodeSharedErrors(t *testing.T) {
	// Three functions, the first and third with the same FREs.
	f0 := FDE{Size: 16, Info: FuncInfo(PCInc, FREAddr1, false, false), FREs: []FRE{
		{0, FREInfo(true, 1, DataWord1B, false), []int32{8}},
		{4, FREInfo(true, 1, DataWord1B, false), []int32{16}},
	}}
	f1 := FDE{Size: 8, Info: f0.Info, FREs: []FRE{{0, FREInfo(true, 1, DataWord1B, false), []int32{8}}}}
	f2 := f0
	s := mustSection(t, Header{Version: Version3, Flags: FlagFDEFuncStartPCRel, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8},
		[]FDE{f0, f1, f2})
	if _, err := s.ShareFREs(); err != nil {
		t.Fatal(err)
	}
	good, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// FRE data: FDE 0 (and 2) at 0 (5+3+3 bytes), FDE 1 at 0xb (5+3).
	if s, err := Decode(good); err != nil || !s.Shares() || s.Index[2].FREOffset != 0 || s.NumFREsOf(2) != 2 {
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
}

// TestDecodeV2SharedOtherInfo: version 2 FDEs that share FREs but not
// their info (a PCMASK PLT function and a PCINC one with the same FREs, as
// ShareFREs shares them in version 2) decode, each function with its own
// info and the FREs, and encode as they were; unshared (SharedV2 false),
// with a copy of the FREs each. ShareFREs of the unshared section gives
// the shared bytes.
func TestDecodeV2SharedOtherInfo(t *testing.T) {
	one := []FRE{{0, FREInfo(true, 1, DataWord1B, false), []int32{8}}}
	h := Header{Version: Version2, Flags: FlagFDEFuncStartPCRel, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8}
	fdes := []FDE{
		{Size: 16, Info: FuncInfo(PCInc, FREAddr1, false, false), FREs: one},
		{Size: 16, Info: FuncInfo(PCMask, FREAddr1, false, false), RepSize: 8, FREs: one},
	}
	copies, err := mustSection(t, h, fdes).Encode()
	if err != nil {
		t.Fatal(err)
	}
	// FDE 1 pointing at FDE 0's FREs, its own copy left out.
	bo := binary.LittleEndian
	shared := slices.Clone(copies[:len(copies)-3])
	bo.PutUint32(shared[16:], bo.Uint32(shared[16:])-3)
	bo.PutUint32(shared[HeaderSize+FDEEntrySizeV2+8:], 0)
	s, err := Decode(shared)
	if err != nil {
		t.Fatal(err)
	}
	got := functionsOf(t, s)
	for i := range got {
		got[i].FREOffset = 0
		if !reflect.DeepEqual(got[i], fdes[i]) {
			t.Errorf("FDE %d = %+v, want %+v", i, got[i], fdes[i])
		}
	}
	if b, err := s.Encode(); err != nil || !bytes.Equal(b, shared) || !s.SharedV2 {
		t.Errorf("Encode = %x, %v (SharedV2 %v); want %x", b, err, s.SharedV2, shared)
	}
	s.SharedV2 = false
	if b, err := s.Encode(); err != nil || !bytes.Equal(b, copies) {
		t.Errorf("Encode unshared = %x, %v; want %x", b, err, copies)
	}
	u := mustSection(t, h, fdes)
	if _, err := u.ShareFREs(); err != nil {
		t.Fatal(err)
	}
	if b, err := u.Encode(); err != nil || !bytes.Equal(b, shared) {
		t.Errorf("Encode of ShareFREs = %x, %v; want %x", b, err, shared)
	}
	if n, err := u.Size(); err != nil || n != len(shared) {
		t.Errorf("Size of ShareFREs = %d, %v; want %d", n, err, len(shared))
	}
}

// TestFRESharerAppendErrors checks that Append refuses a section with
// functions appended and not shared before the n given, and records that
// do not follow each other in index order, or pass the end of the data
// given.
func TestFRESharerAppendErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 3))
	draft, fdes := randomDraft(r, ABIAMD64LittleEndian)
	draft.Header.Version = Version3
	for len(fdes) < 3 {
		_, more := randomDraft(r, ABIAMD64LittleEndian)
		fdes = append(fdes, more...)
	}
	for _, c := range []struct {
		name string
		bad  func(s *Section, index []IndexEntry, data []byte) ([]IndexEntry, []byte)
		want string
	}{
		{"unshared", func(s *Section, index []IndexEntry, data []byte) ([]IndexEntry, []byte) {
			s.Index = append(s.Index, index[0])
			return index, data
		}, "not shared"},
		{"out of order", func(s *Section, index []IndexEntry, data []byte) ([]IndexEntry, []byte) {
			index[1].FREOffset, index[2].FREOffset = index[2].FREOffset, index[1].FREOffset
			return index, data
		}, "not after"},
		{"past the data", func(s *Section, index []IndexEntry, data []byte) ([]IndexEntry, []byte) {
			return index, data[:int(index[len(index)-1].FREOffset)+FDEAttrSize-1]
		}, "not after"},
	} {
		s := buildDraft(draft, fdes)
		index, data := slices.Clone(s.Index), slices.Clone(s.FREData)
		s.Index, s.FREData = nil, nil
		index, data = c.bad(s, index, data)
		s.Index = append(s.Index, index...)
		if _, err := NewFRESharer(len(index)).Append(s, len(index), data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Append: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
