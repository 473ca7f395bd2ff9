package emit

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// sectionForTest is an AMD64 section of two functions, the second
// sharing nothing: FDE 0 of size 0x20 with two FREs, FDE 1 of size 0x10
// with one.
func sectionForTest(t *testing.T) (*Section, []FDE) {
	t.Helper()
	fdes := []FDE{
		{StartOffset: 0x100, Size: 0x20, FREs: []FRE{
			{StartAddr: 0, Info: FREInfo(true, 1, DataWord1B, false), Words: []int32{8}},
			{StartAddr: 4, Info: FREInfo(true, 2, DataWord2B, false), Words: []int32{0x200, -16}},
		}},
		{StartOffset: 0x200, Size: 0x10, FREs: []FRE{
			{StartAddr: 0, Info: FREInfo(true, 1, DataWord1B, false), Words: []int32{16}},
		}},
	}
	s := &Section{Header: Header{Version: Version3, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8}}
	for _, f := range fdes {
		if err := s.AppendFDE(f); err != nil {
			t.Fatal(err)
		}
	}
	return s, fdes
}

// TestFDEOfSection: FDE gives a section's functions back with their
// FREs, as Decode reads them from the encoded section.
func TestFDEOfSection(t *testing.T) {
	s, fdes := sectionForTest(t)
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	dec, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fdes {
		got, err := s.FDE(i)
		if err != nil {
			t.Fatal(err)
		}
		want, err := dec.FDE(i)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("FDE(%d) = %+v, decoded %+v", i, got, want)
		}
		if !reflect.DeepEqual(got.FREs, fdes[i].FREs) {
			t.Errorf("FDE(%d) FREs = %+v, appended %+v", i, got.FREs, fdes[i].FREs)
		}
	}
	for _, i := range []int{-1, len(fdes)} {
		if _, err := s.FDE(i); err == nil {
			t.Errorf("FDE(%d) of %d: no error", i, len(fdes))
		}
	}
}

// TestSectionMalformed: a section whose FRE data is broken makes FDE,
// Dump, DumpJSON and ReaderFor fail with an error that says what is
// wrong, not panic or read it as empty.
func TestSectionMalformed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(s *Section)
		want    string
	}{
		{"FRE count past the data", func(s *Section) { s.FREData[0] = 200 }, "FREs cannot fit"},
		{"start past the size", func(s *Section) { s.FREData[FDEAttrSize+3] = 0x30 }, "past the function size"}, // FRE 1's start
		{"invalid word size", func(s *Section) { s.FREData[FDEAttrSize+1] |= 3 << 5 }, "invalid data-word size"},
		{"record past the data", func(s *Section) { s.Index[1].FREOffset = uint32(len(s.FREData)) }, "past the FRE data"},
		{"unknown ABI", func(s *Section) { s.Header.ABI = 9 }, "unknown ABI"},
	} {
		s, _ := sectionForTest(t)
		tc.corrupt(s)
		var b bytes.Buffer
		errs := map[string]error{
			"Dump":     Dump(&b, s, 0, ".sframe"),
			"DumpJSON": DumpJSON(&b, s, 0, ".sframe"),
		}
		_, errs["ReaderFor"] = ReaderFor(s, 0)
		for name, err := range errs {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %s: %v, want %q", tc.name, name, err, tc.want)
			}
		}
	}
}
