package emit

import (
	"bytes"
	"io"
	"reflect"
	"testing"
)

// maxFuzzSeed is the largest golden section FuzzDecode is seeded with.
const maxFuzzSeed = 16 << 10

// FuzzDecode checks that Decode never panics, that whatever decodes can be
// dumped and encoded, to the same bytes when a v3 header has GNU's layout,
// and that an encoded section decodes back to the same content (FRE
// offsets are recomputed by Encode, so they are compared only through a
// second Encode).
func FuzzDecode(f *testing.F) {
	f.Add(example61(f))
	for _, g := range goldenFiles(f) {
		raw, rel, _, ok := sframeOf(f, g.elf)
		// The biggest sections (tens of KB) make each run slow and the
		// fuzzer's minimization take minutes; smaller ones cover the same
		// features.
		if ok && len(raw) <= maxFuzzSeed {
			f.Add(raw)
			f.Add(rel)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sec, err := Decode(data)
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("error %T is not a *FormatError: %v", err, err)
			}
			return
		}
		if err := Dump(io.Discard, sec, 0x1000, ".sframe"); err != nil {
			t.Fatalf("Dump: %v", err)
		}
		if err := DumpJSON(io.Discard, sec, 0, ".sframe"); err != nil {
			t.Fatalf("DumpJSON: %v", err)
		}
		enc, err := sec.Encode()
		if err != nil {
			// Decode accepts nothing Encode refuses.
			t.Fatalf("Encode(Decode(x)): %v", err)
		}
		if gnuLayout(data) && !bytes.Equal(enc, data) {
			t.Fatalf("Encode(Decode(x)) != x\n got %x\nwant %x", enc, data)
		}
		sec2, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(x)): %v\n%x", err, enc)
		}
		if !equalIgnoringFREOffsets(sec, sec2) {
			t.Fatalf("Decode(Encode(x)) != x\n got %+v\nwant %+v", sec2, sec)
		}
		enc2, err := sec2.Encode()
		if err != nil {
			t.Fatalf("Encode(Decode(Encode(x))): %v", err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("Encode is not stable\n got %x\nwant %x", enc2, enc)
		}
	})
}

func equalIgnoringFREOffsets(a, b *Section) bool {
	if !reflect.DeepEqual(a.Header, b.Header) || !bytes.Equal(a.Trailer, b.Trailer) || a.NumFDEs() != b.NumFDEs() {
		return false
	}
	fa, errA := a.Functions()
	fb, errB := b.Functions()
	if errA != nil || errB != nil {
		return false
	}
	for i := range fa {
		fa[i].FREOffset, fb[i].FREOffset = 0, 0
	}
	return reflect.DeepEqual(fa, fb)
}

// gnuLayout reports whether a decodable version 3 section has the header
// offsets GNU writes: fdeoff 0 and the FRE sub-section right after the FDE
// index. (Version 2 is left out: Decode ignores the FDE padding bytes and
// the FRE offset of FDEs without FREs.)
func gnuLayout(data []byte) bool {
	sec, err := Decode(data)
	if err != nil || sec.Header.Version != Version3 {
		return false
	}
	bo := sec.Header.ABI.ByteOrder()
	return bo.Uint32(data[20:]) == 0 && bo.Uint32(data[24:]) == uint32(sec.NumFDEs())*FDEIndexEntrySize
}
