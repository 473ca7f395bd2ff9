package emit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestDumpJSONExample(t *testing.T) {
	sec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := DumpJSON(&buf, sec, 0x1000, ".sframe"); err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{
  "section": ".sframe", "version": 3, "flags": ["SFRAME_F_FDE_FUNC_START_PCREL"],
  "abi": "SFRAME_ABI_AMD64_ENDIAN_LITTLE", "cfa_fixed_fp_offset": 0, "cfa_fixed_ra_offset": -8,
  "auxhdr_len": 0, "num_fdes": 2, "num_fres": 7,
  "functions": [
    {"index": 0, "pc": 4096, "size": 7, "attributes": "", "signal": false, "type": "default",
     "pc_type": "inc", "fre_type": "addr1", "rep_size": 0, "fres": [
      {"pc": 4096, "start": 0, "ra_undefined": false,
       "cfa": {"kind": "register", "reg": "sp", "offset": 8, "deref": false},
       "fp": null, "ra": {"kind": "fixed", "offset": -8, "deref": true},
       "mangled": false, "info": 3, "words": [8]},
      {"pc": 4097, "start": 1, "ra_undefined": false,
       "cfa": {"kind": "register", "reg": "sp", "offset": 16, "deref": false},
       "fp": {"kind": "cfa", "offset": -16, "deref": true}, "ra": {"kind": "fixed", "offset": -8, "deref": true},
       "mangled": false, "info": 5, "words": [16, -16]},
      {"pc": 4100, "start": 4, "ra_undefined": false,
       "cfa": {"kind": "register", "reg": "fp", "offset": 16, "deref": false},
       "fp": {"kind": "cfa", "offset": -16, "deref": true}, "ra": {"kind": "fixed", "offset": -8, "deref": true},
       "mangled": false, "info": 4, "words": [16, -16]},
      {"pc": 4102, "start": 6, "ra_undefined": false,
       "cfa": {"kind": "register", "reg": "sp", "offset": 8, "deref": false},
       "fp": {"kind": "cfa", "offset": -16, "deref": true}, "ra": {"kind": "fixed", "offset": -8, "deref": true},
       "mangled": false, "info": 5, "words": [8, -16]}]},
    {"index": 1, "pc": 4103, "size": 10, "attributes": "", "signal": false, "type": "default",
     "pc_type": "inc", "fre_type": "addr1", "rep_size": 0, "fres": [
      {"pc": 4103, "start": 0, "ra_undefined": false,
       "cfa": {"kind": "register", "reg": "sp", "offset": 8, "deref": false},
       "fp": null, "ra": {"kind": "fixed", "offset": -8, "deref": true},
       "mangled": false, "info": 3, "words": [8]},
      {"pc": 4107, "start": 4, "ra_undefined": false,
       "cfa": {"kind": "register", "reg": "sp", "offset": 32, "deref": false},
       "fp": null, "ra": {"kind": "fixed", "offset": -8, "deref": true},
       "mangled": false, "info": 3, "words": [32]},
      {"pc": 4112, "start": 9, "ra_undefined": false,
       "cfa": {"kind": "register", "reg": "sp", "offset": 8, "deref": false},
       "fp": null, "ra": {"kind": "fixed", "offset": -8, "deref": true},
       "mangled": false, "info": 3, "words": [8]}]}]}`
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DumpJSON =\n%s", buf.Bytes())
	}
}

func TestJSONRules(t *testing.T) {
	reg := func(r string, off int32, deref bool) *jsonRule {
		return &jsonRule{Kind: "register", Reg: r, Offset: off, Deref: deref}
	}
	cfa := func(off int32) *jsonRule { return &jsonRule{Kind: "cfa", Offset: off, Deref: true} }
	pad := &jsonRule{Kind: "padding"}
	fixedRA := &jsonRule{Kind: "fixed", Offset: -8, Deref: true}
	amd64 := Header{Version: 3, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8}
	s390x := Header{Version: 3, ABI: ABIS390XBigEndian}
	s390xV2 := Header{Version: 2, ABI: ABIS390XBigEndian}
	arm := Header{Version: 3, ABI: ABIAArch64LittleEndian}
	tests := []struct {
		name        string
		h           Header
		flex        bool
		info        uint8
		words       []int32
		cfa, fp, ra *jsonRule
	}{
		{"amd64 flex sp", amd64, true, 0x04, []int32{0x39, 8}, reg("sp", 8, false), nil, fixedRA},
		{"amd64 flex drap", amd64, true, 0x0a, []int32{0x51, 0, 0, 0x33, 0}, reg("r10", 0, false), reg("fp", 0, true), pad},
		{"amd64 flex cfa deref", amd64, true, 0x0a, []int32{0x33, -8, 0, 0x33, 0}, reg("fp", -8, true), reg("fp", 0, true), pad},
		{"amd64 flex stack slots", amd64, true, 0x0c, []int32{0x39, 16, 2, -8, 2, -16}, reg("sp", 16, false), cfa(-16), cfa(-8)},
		{"s390x flex registers", s390x, true, 0x0c, []int32{0x79, 0, -127, 0, -119, 0}, reg("sp", 160, false), reg("r17", 0, false), reg("r16", 0, false)},
		{"s390x padding", s390x, false, 0x07, []int32{20, 0, -72}, reg("sp", 320, false), cfa(-72), pad},
		{"s390x v2 registers", s390xV2, false, 0x07, []int32{0, 29, 23}, reg("sp", 160, false), reg("fp", 0, false), reg("r14", 0, false)},
		{"aarch64", arm, false, 0x87, []int32{16, -8, -16}, reg("sp", 16, false), cfa(-16), cfa(-8)},
		{"aarch64 fp base", arm, false, 0x04, []int32{16, -16}, reg("fp", 16, false), nil, cfa(-16)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec := &Section{Header: tt.h}
			e := &FRE{Info: tt.info, Words: tt.words}
			var c, f, r *jsonRule
			if tt.flex {
				c, f, r = flexRules(sec, e)
			} else {
				c, f, r = defaultRules(sec, e)
			}
			for _, x := range []struct {
				name      string
				got, want *jsonRule
			}{{"cfa", c, tt.cfa}, {"fp", f, tt.fp}, {"ra", r, tt.ra}} {
				if !reflect.DeepEqual(x.got, x.want) {
					t.Errorf("%s = %+v, want %+v", x.name, x.got, x.want)
				}
			}
		})
	}
}
