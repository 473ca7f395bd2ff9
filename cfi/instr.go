package cfi

import "encoding/binary"

// Instruction is one decoded call-frame instruction.
type Instruction struct {
	Op Op
	// Reg is the (first) register operand.
	Reg uint64
	// Reg2 is the second register of DW_CFA_register.
	Reg2 uint64
	// Offset is the signed operand in bytes, with the CIE data alignment
	// factor applied where DWARF factors it (offset, offset_extended(_sf),
	// def_cfa_sf, def_cfa_offset_sf, val_offset(_sf),
	// GNU_negative_offset_extended (negated)); unfactored where DWARF does
	// not (def_cfa, def_cfa_offset). For GNU_args_size: the size.
	Offset int64
	// Delta is, for advance_loc*, the advance in bytes (code alignment
	// factor applied); for set_loc the new location, decoded with the FDE
	// pointer encoding (for relocatable objects relative to the function's
	// section, like FDE.Start).
	Delta uint64
	// Expr is the DWARF expression block of def_cfa_expression, expression
	// and val_expression (aliases the section data).
	Expr []byte
	// Raw is the whole instruction as encoded, opcode byte first (aliases
	// the section data).
	Raw []byte
}

// InstructionReader decodes call-frame instructions one at a time.
type InstructionReader struct {
	data      []byte
	pos       int
	base      uint64 // section offset of data[0], for errors and pcrel
	codeAlign uint64
	dataAlign int64
	order     binary.ByteOrder
	ptr       PointerContext
	fdeEnc    PointerEncoding
}

// NewInstructionReader returns a reader of the instructions in data, which
// belong to an entry of cie. ptr decodes DW_CFA_set_loc operands (with the
// CIE's FDE encoding); nil means absolute 8-byte addresses in order.
func NewInstructionReader(data []byte, cie *CIE, order binary.ByteOrder, ptr *PointerContext) *InstructionReader {
	r := &InstructionReader{}
	r.reset(data, 0, cie, order, ptr)
	return r
}

func (r *InstructionReader) reset(data []byte, base uint64, cie *CIE, order binary.ByteOrder, ptr *PointerContext) {
	*r = InstructionReader{data: data, base: base, order: order}
	if ptr != nil {
		r.ptr = *ptr
	} else {
		r.ptr = PointerContext{AddrSize: 8}
	}
	r.ptr.Order = order
	r.codeAlign, r.dataAlign = 1, 1
	if cie != nil {
		r.codeAlign = cie.CodeAlign
		r.dataAlign = cie.DataAlign
		r.fdeEnc = PointerEncoding(cie.FDEEncoding)
		if cie.AddressSize != 0 {
			r.ptr.AddrSize = int(cie.AddressSize)
		}
	}
}

// CIEInstructions returns a reader of cie's initial instructions.
func (f *Frames) CIEInstructions(cie *CIE) *InstructionReader {
	r := &InstructionReader{}
	r.reset(cie.Initial, cie.InitialOffset, cie, f.Order, &f.ptr)
	return r
}

// FDEInstructions returns a reader of fde's instructions (not including its
// CIE's initial instructions).
func (f *Frames) FDEInstructions(fde *FDE) *InstructionReader {
	ptr := f.ptr
	ptr.FuncAddr = fde.Start
	r := &InstructionReader{}
	r.reset(fde.Instructions, fde.InstructionsOffset, fde.CIE, f.Order, &ptr)
	return r
}

// Offset returns the section offset of the next instruction (when the
// reader was made by Frames.CIEInstructions or Frames.FDEInstructions; else
// the offset in data).
func (r *InstructionReader) Offset() uint64 { return r.base + uint64(r.pos) }
