package emit

import (
	"bytes"
	"reflect"
	"testing"
)

// TestNarrowLast appends functions of each FRE type to sections of a
// little- and a big-endian ABI, narrows the last one, and checks the FRE
// type it gets (the narrowest that holds its last FRE's start), that the
// section decodes to the same functions and FREs but for the type, that
// the record is the bytes AppendFDE writes for the narrowed function, and
// that a record not at the end is left alone.
func TestNarrowLast(t *testing.T) {
	fre := func(start uint32, words ...int32) FRE {
		ws := DataWord1B
		for _, w := range words {
			if !wordFits(w, ws) {
				ws = DataWord4B
			}
		}
		return FRE{StartAddr: start, Info: FREInfo(true, len(words), ws, false), Words: words}
	}
	cases := []struct {
		name string
		size uint32
		fres []FRE
		want FREType
	}{
		{"ADDR1 stays", 0x80, []FRE{fre(0, 8), fre(1, 16)}, FREAddr1},
		{"ADDR2 to ADDR1", 0x300, []FRE{fre(0, 8), fre(4, 16), fre(0xff, 8)}, FREAddr1},
		{"ADDR2 stays", 0x300, []FRE{fre(0, 8), fre(0x100, 16)}, FREAddr2},
		{"ADDR4 to ADDR1", 0x20000, []FRE{fre(0, 8), fre(0x10, 0x12345678, -16)}, FREAddr1},
		{"ADDR4 to ADDR2", 0x20000, []FRE{fre(0, 8), fre(0xffff, 16, -16)}, FREAddr2},
		{"ADDR4 stays", 0x20000, []FRE{fre(0, 8), fre(0x10000, 16)}, FREAddr4},
		{"no FREs", 0x1000, nil, FREAddr1},
	}
	for _, abi := range []ABI{ABIAMD64LittleEndian, ABIS390XBigEndian} {
		for _, c := range cases {
			h := Header{Version: Version3, ABI: abi, Flags: FlagFDEFuncStartPCRel}
			before := FDE{Size: 0x10, Info: FuncInfo(PCInc, FREAddr1, false, false), FREs: []FRE{fre(0, 8)}}
			f := FDE{Size: c.size, Info: FuncInfo(PCInc, FRETypeFor(c.size), false, true), FREs: c.fres}
			s, err := NewSection(h, []FDE{before, f})
			if err != nil {
				t.Fatalf("%v %s: %v", abi, c.name, err)
			}
			if err := s.NarrowLast(1); err != nil {
				t.Fatalf("%v %s: %v", abi, c.name, err)
			}
			narrowed := f
			narrowed.Info = FuncInfo(PCInc, c.want, false, true)
			want, err := NewSection(h, []FDE{before, narrowed})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.FREData, want.FREData) || !reflect.DeepEqual(s.Index, want.Index) || s.FRECount != want.FRECount {
				t.Errorf("%v %s: FRE data % x, want % x", abi, c.name, s.FREData, want.FREData)
			}
			if g, err := s.Func(1); err != nil || g.FREType() != c.want {
				t.Errorf("%v %s: FRE type %v (%v), want %v", abi, c.name, g.FREType(), err, c.want)
			}
			enc, err := s.Encode()
			if err != nil {
				t.Fatalf("%v %s: %v", abi, c.name, err)
			}
			dec, err := Decode(enc)
			if err != nil {
				t.Fatalf("%v %s: %v", abi, c.name, err)
			}
			got := functionsOf(t, dec)
			if len(got) != 2 || len(got[1].FREs) != len(c.fres) || len(c.fres) > 0 && !reflect.DeepEqual(got[1].FREs, c.fres) ||
				got[1].Size != c.size || !got[1].Signal() || got[1].FREType() != c.want {
				t.Errorf("%v %s: decodes to %+v", abi, c.name, got)
			}
			// Not the last record: nothing changes.
			s2, err := NewSection(h, []FDE{f, before})
			if err != nil {
				t.Fatal(err)
			}
			data := bytes.Clone(s2.FREData)
			if err := s2.NarrowLast(0); err != nil || !bytes.Equal(s2.FREData, data) {
				t.Errorf("%v %s: a record not at the end changed (%v)", abi, c.name, err)
			}
		}
	}
	s := &Section{Header: Header{Version: Version3, ABI: ABIAMD64LittleEndian}}
	if err := s.NarrowLast(0); err == nil {
		t.Error("NarrowLast of a missing FDE succeeded")
	}
}
