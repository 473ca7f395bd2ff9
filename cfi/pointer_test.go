package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPointerEncodings(t *testing.T) {
	mem := map[uint64]uint64{0x30010: 0x1234}
	indirect := func(addr uint64) (uint64, error) {
		if v, ok := mem[addr]; ok {
			return v, nil
		}
		return 0, errors.New("not mapped")
	}
	const secBase = 0x100 // section offset of data[0]
	type tc struct {
		name     string
		enc      PointerEncoding
		addrSize int
		le       []byte // little-endian form (reversed per field for big-endian where marked)
		be       []byte
		pos      int
		want     uint64
		next     int
		err      string
	}
	tests := []tc{
		{name: "absptr8", enc: PEAbsPtr, le: []byte{1, 2, 3, 4, 5, 6, 7, 8}, be: []byte{8, 7, 6, 5, 4, 3, 2, 1}, want: 0x0807060504030201, next: 8},
		{name: "absptr4", enc: PEAbsPtr, addrSize: 4, le: []byte{1, 2, 3, 4}, be: []byte{4, 3, 2, 1}, want: 0x04030201, next: 4},
		{name: "signed4", enc: PESigned, addrSize: 4, le: []byte{0xfe, 0xff, 0xff, 0xff}, be: []byte{0xff, 0xff, 0xff, 0xfe}, want: 0xfffffffe, next: 4},
		{name: "uleb128", enc: PEULEB128, le: []byte{0xe5, 0x8e, 0x26}, be: []byte{0xe5, 0x8e, 0x26}, want: 624485, next: 3},
		{name: "sleb128", enc: PESLEB128, le: []byte{0x7f}, be: []byte{0x7f}, want: ^uint64(0), next: 1},
		{name: "udata2", enc: PEUData2, le: []byte{0x34, 0x12}, be: []byte{0x12, 0x34}, want: 0x1234, next: 2},
		{name: "udata4", enc: PEUData4, le: []byte{0x78, 0x56, 0x34, 0x12}, be: []byte{0x12, 0x34, 0x56, 0x78}, want: 0x12345678, next: 4},
		{name: "udata8", enc: PEUData8, le: []byte{8, 7, 6, 5, 4, 3, 2, 1}, be: []byte{1, 2, 3, 4, 5, 6, 7, 8}, want: 0x0102030405060708, next: 8},
		{name: "sdata2", enc: PESData2, le: []byte{0xfe, 0xff}, be: []byte{0xff, 0xfe}, want: ^uint64(1), next: 2},
		{name: "sdata4", enc: PESData4, le: []byte{0xfc, 0xff, 0xff, 0xff}, be: []byte{0xff, 0xff, 0xff, 0xfc}, want: ^uint64(3), next: 4},
		{name: "sdata8", enc: PESData8, le: []byte{0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, be: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf8}, want: ^uint64(7), next: 8},
		{name: "pcrel|sdata4", enc: PEPCRel | PESData4, le: []byte{0, 0, 0xf0, 0xff, 0xff, 0xff}, be: []byte{0, 0, 0xff, 0xff, 0xff, 0xf0}, pos: 2, want: 0x10000 + secBase + 2 - 16, next: 6},
		{name: "pcrel|sdata4 4-byte", enc: PEPCRel | PESData4, addrSize: 4, le: []byte{0x00, 0x00, 0xff, 0xff}, be: []byte{0xff, 0xff, 0x00, 0x00}, want: (0x10000 + secBase - 0x10000) & 0xffffffff, next: 4},
		{name: "textrel|udata4", enc: PETextRel | PEUData4, le: []byte{0x10, 0, 0, 0}, be: []byte{0, 0, 0, 0x10}, want: 0x20010, next: 4},
		{name: "datarel|sdata4", enc: PEDataRel | PESData4, le: []byte{0x10, 0, 0, 0}, be: []byte{0, 0, 0, 0x10}, want: 0x30010, next: 4},
		{name: "funcrel|uleb128", enc: PEFuncRel | PEULEB128, le: []byte{0x20}, be: []byte{0x20}, want: 0x40020, next: 1},
		{name: "aligned", enc: PEAligned, le: []byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 1, 2, 0, 0, 0, 0, 0, 0}, be: []byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0, 0, 0, 0, 0, 0, 2, 1}, pos: 1, want: 0x201, next: 16},
		{name: "indirect|pcrel|sdata4", enc: PEIndirect | PEPCRel | PESData4, le: []byte{0x04, 0xff, 0xff, 0xff}, be: []byte{0xff, 0xff, 0xff, 0x04}, want: 0xabcdef, next: 4},
		{name: "indirect|datarel", enc: PEIndirect | PEDataRel | PEUData2, le: []byte{0x10, 0}, be: []byte{0, 0x10}, want: 0x1234, next: 2},
		{name: "indirect unmapped", enc: PEIndirect | PEUData2, le: []byte{0x10, 0}, be: []byte{0, 0x10}, err: "indirect pointer to 0x10: not mapped"},
		{name: "omit", enc: PEOmit, le: []byte{1}, be: []byte{1}, want: 0, next: 0},
		{name: "unknown format", enc: 0x05, le: []byte{1}, be: []byte{1}, err: "unknown pointer encoding 0x5"},
		{name: "unknown application", enc: 0x60 | PEUData2, le: []byte{1, 2}, be: []byte{1, 2}, err: "unknown pointer encoding 0x62"},
		{name: "truncated udata4", enc: PEUData4, le: []byte{1, 2, 3}, be: []byte{1, 2, 3}, err: "operand runs past the end"},
		{name: "truncated uleb", enc: PEULEB128, le: []byte{0x80}, be: []byte{0x80}, err: "operand runs past the end"},
		{name: "truncated aligned", enc: PEAligned, le: []byte{0, 0, 0}, be: []byte{0, 0, 0}, pos: 1, err: "operand runs past the end"},
	}
	// The pcrel indirect case points at 0x10000 + 0x100 - 252 = 0x10004.
	mem[0x10004] = 0xabcdef
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%v/%s", order, tt.name), func(t *testing.T) {
				size := tt.addrSize
				if size == 0 {
					size = 8
				}
				p := PointerContext{Order: order, AddrSize: size, SectionAddr: 0x10000, TextAddr: 0x20000,
					DataAddr: 0x30000, FuncAddr: 0x40000, Indirect: indirect}
				data := tt.le
				if order == binary.BigEndian {
					data = tt.be
				}
				v, next, err := p.Decode(data, tt.pos, tt.enc, secBase)
				if tt.err != "" {
					if err == nil || !strings.Contains(err.Error(), tt.err) {
						t.Fatalf("error %v, want %q", err, tt.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if v != tt.want || next != tt.next {
					t.Errorf("got %#x next %d, want %#x next %d", v, next, tt.want, tt.next)
				}
			})
		}
	}
}

func TestPointerEncodingString(t *testing.T) {
	for enc, want := range map[PointerEncoding]string{
		0x1b: "DW_EH_PE_pcrel|DW_EH_PE_sdata4",
		0x9b: "DW_EH_PE_indirect|DW_EH_PE_pcrel|DW_EH_PE_sdata4",
		0x00: "DW_EH_PE_absptr",
		0xff: "DW_EH_PE_omit",
		0x03: "DW_EH_PE_udata4",
	} {
		if got := enc.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint8(enc), got, want)
		}
	}
}

func TestOpString(t *testing.T) {
	for op, want := range map[Op]string{
		OpDefCFA: "DW_CFA_def_cfa", OpAdvanceLoc: "DW_CFA_advance_loc", OpRestore: "DW_CFA_restore",
		OpGNUWindowSave: "DW_CFA_GNU_window_save", OpAArch64NegateRAStateWithPC: "DW_CFA_AARCH64_negate_ra_state_with_pc",
		0x3f: "DW_CFA_0x3f",
	} {
		if got := op.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint8(op), got, want)
		}
	}
}

// TestEnumNames checks the names of Source and RuleKind values, known and
// not.
func TestEnumNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Auto.String(), "auto"}, {EHFrame.String(), ".eh_frame"}, {DebugFrame.String(), ".debug_frame"},
		{Source(3).String(), "Source(3)"}, {Source(-1).String(), "Source(-1)"},
		{RuleValExpression.String(), "val_expression"}, {RuleKind(8).String(), "RuleKind(8)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
