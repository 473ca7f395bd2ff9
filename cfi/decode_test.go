package cfi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func TestInstructionFields(t *testing.T) {
	cie := &CIE{CodeAlign: 4, DataAlign: -8, FDEEncoding: uint8(PEPCRel | PESData4), AddressSize: 8}
	tests := []struct {
		name  string
		le    []byte // little-endian encoding (big-endian derived for the multi-byte advances)
		be    []byte
		want  Instruction
		nread int // bytes of the instruction
	}{
		{"advance_loc", []byte{0x43}, nil, Instruction{Op: OpAdvanceLoc, Delta: 12}, 1},
		{"advance_loc1", []byte{0x02, 0x10}, nil, Instruction{Op: OpAdvanceLoc1, Delta: 64}, 2},
		{"advance_loc2", []byte{0x03, 0x00, 0x01}, []byte{0x03, 0x01, 0x00}, Instruction{Op: OpAdvanceLoc2, Delta: 1024}, 3},
		{"advance_loc4", []byte{0x04, 0x01, 0, 0, 0}, []byte{0x04, 0, 0, 0, 1}, Instruction{Op: OpAdvanceLoc4, Delta: 4}, 5},
		{"set_loc pcrel", []byte{0x01, 0x10, 0, 0, 0}, []byte{0x01, 0, 0, 0, 0x10}, Instruction{Op: OpSetLoc, Delta: 0x5000 + 0x200 + 2 + 0x10}, 5},
		{"offset", []byte{0x86, 0x02}, nil, Instruction{Op: OpOffset, Reg: 6, Offset: -16}, 2},
		{"restore", []byte{0xc6}, nil, Instruction{Op: OpRestore, Reg: 6}, 1},
		{"offset_extended", []byte{0x05, 0x80, 0x01, 0x03}, nil, Instruction{Op: OpOffsetExtended, Reg: 128, Offset: -24}, 4},
		{"offset_extended_sf", []byte{0x11, 0x06, 0x7f}, nil, Instruction{Op: OpOffsetExtendedSF, Reg: 6, Offset: 8}, 3},
		{"GNU_negative_offset_extended", []byte{0x2f, 0x06, 0x02}, nil, Instruction{Op: OpGNUNegativeOffsetExtended, Reg: 6, Offset: 16}, 3},
		{"register", []byte{0x09, 0x03, 0x0c}, nil, Instruction{Op: OpRegister, Reg: 3, Reg2: 12}, 3},
		{"def_cfa unfactored", []byte{0x0c, 0x07, 0x08}, nil, Instruction{Op: OpDefCFA, Reg: 7, Offset: 8}, 3},
		{"def_cfa_sf factored", []byte{0x12, 0x07, 0x7e}, nil, Instruction{Op: OpDefCFASF, Reg: 7, Offset: 16}, 3},
		{"def_cfa_offset unfactored", []byte{0x0e, 0x10}, nil, Instruction{Op: OpDefCFAOffset, Offset: 16}, 2},
		{"def_cfa_offset_sf factored", []byte{0x13, 0x7e}, nil, Instruction{Op: OpDefCFAOffsetSF, Offset: 16}, 2},
		{"val_offset factored", []byte{0x14, 0x06, 0x02}, nil, Instruction{Op: OpValOffset, Reg: 6, Offset: -16}, 3},
		{"val_offset_sf factored", []byte{0x15, 0x06, 0x7e}, nil, Instruction{Op: OpValOffsetSF, Reg: 6, Offset: 16}, 3},
		{"def_cfa_expression", []byte{0x0f, 0x02, 0x77, 0x08}, nil, Instruction{Op: OpDefCFAExpression, Expr: []byte{0x77, 0x08}}, 4},
		{"expression", []byte{0x10, 0x06, 0x01, 0x9c}, nil, Instruction{Op: OpExpression, Reg: 6, Expr: []byte{0x9c}}, 4},
		{"val_expression", []byte{0x16, 0x06, 0x00}, nil, Instruction{Op: OpValExpression, Reg: 6, Expr: []byte{}}, 3},
		{"GNU_args_size", []byte{0x2e, 0x20}, nil, Instruction{Op: OpGNUArgsSize, Offset: 32}, 2},
		{"negate_ra_state", []byte{0x2d}, nil, Instruction{Op: OpGNUWindowSave}, 1},
		{"negate_ra_state_with_pc", []byte{0x2c}, nil, Instruction{Op: OpAArch64NegateRAStateWithPC}, 1},
		{"remember_state", []byte{0x0a}, nil, Instruction{Op: OpRememberState}, 1},
		{"nop", []byte{0x00}, nil, Instruction{Op: OpNop}, 1},
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, tt := range tests {
			data := tt.le
			if order == binary.BigEndian && tt.be != nil {
				data = tt.be
			}
			// Put the instruction after one nop, in data at section offset 0x200
			// (the set_loc operand is at 0x202).
			buf := append([]byte{0}, data...)
			ptr := &PointerContext{Order: order, AddrSize: 8, SectionAddr: 0x5000}
			r := NewInstructionReader(buf, cie, order, ptr)
			r.base = 0x200
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
			in, err := r.Next()
			if err != nil {
				t.Errorf("%v %s: %v", order, tt.name, err)
				continue
			}
			want := tt.want
			want.Raw = buf[1 : 1+tt.nread]
			if in.Op != want.Op || in.Reg != want.Reg || in.Reg2 != want.Reg2 || in.Offset != want.Offset ||
				in.Delta != want.Delta || !bytes.Equal(in.Expr, want.Expr) || (in.Expr == nil) != (want.Expr == nil) || !bytes.Equal(in.Raw, want.Raw) {
				t.Errorf("%v %s: %+v, want %+v", order, tt.name, in, want)
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Errorf("%v %s: after it: %v", order, tt.name, err)
			}
		}
	}
}

// TestDecodeAt checks that DecodeAt decodes at any instruction's offset
// what Next decodes there, without moving the reader, and ends with
// io.EOF; an error names the instruction's offset.
func TestDecodeAt(t *testing.T) {
	cie := &CIE{CodeAlign: 4, DataAlign: -8}
	// advance_loc 1; def_cfa_offset 16 (padded to 3 bytes); offset r6;
	// remember_state; advance_loc2 2; restore_state; nop
	data := []byte{0x41, 0x0e, 0x90, 0x80, 0x00, 0x86, 0x02, 0x0a, 0x03, 0x02, 0x00, 0x0b, 0x00}
	r := NewInstructionReader(data, cie, binary.LittleEndian, nil)
	var want []Instruction
	var offsets []int
	for {
		offsets = append(offsets, int(r.Offset()))
		in, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, in)
	}
	if len(want) != 7 || want[1].Offset != 16 || want[4].Delta != 8 {
		t.Fatalf("Next decoded %+v", want)
	}
	at := NewInstructionReader(data, cie, binary.LittleEndian, nil)
	var in Instruction
	for i, w := range want {
		next, err := at.DecodeAt(offsets[i], &in)
		if err != nil || next != offsets[i+1] || in.Op != w.Op || in.Reg != w.Reg || in.Offset != w.Offset ||
			in.Delta != w.Delta || !bytes.Equal(in.Raw, w.Raw) {
			t.Errorf("DecodeAt(%d) = %+v, %d, %v; want %+v, %d", offsets[i], in, next, err, w, offsets[i+1])
		}
		if at.Offset() != 0 {
			t.Fatalf("DecodeAt moved the reader to %d", at.Offset())
		}
	}
	if _, err := at.DecodeAt(len(data), &in); err != io.EOF {
		t.Errorf("DecodeAt at the end: %v, want io.EOF", err)
	}
	cut := NewInstructionReader([]byte{0x00, 0x0e, 0x80}, cie, binary.LittleEndian, nil)
	if next, err := cut.DecodeAt(1, &in); next != 1 || err == nil || !bytes.Contains([]byte(err.Error()), []byte("offset 0x1")) {
		t.Errorf("DecodeAt of a truncated operand: %d, %v; want 1 and an error at offset 0x1", next, err)
	}
}
