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
	big       bool // order is big-endian
	fdeEnc    PointerEncoding
	// ptr, with addrSize and funcAddr in place of its own, decodes
	// DW_CFA_set_loc operands.
	ptr      *PointerContext
	addrSize int
	funcAddr uint64
}

// NewInstructionReader returns a reader of the instructions in data, which
// belong to an entry of cie. ptr decodes DW_CFA_set_loc operands (with the
// CIE's FDE encoding); nil means absolute addresses of the CIE's address
// size. Offsets in errors count from data[0].
func NewInstructionReader(data []byte, cie *CIE, order binary.ByteOrder, ptr *PointerContext) *InstructionReader {
	if ptr == nil {
		ptr = &PointerContext{Order: order, AddrSize: 8}
	}
	r := &InstructionReader{}
	r.reset(data, 0, cie, order, isBigEndian(order), ptr, ptr.FuncAddr)
	return r
}

func (r *InstructionReader) reset(data []byte, base uint64, cie *CIE, order binary.ByteOrder, big bool, ptr *PointerContext, funcAddr uint64) {
	r.data, r.pos, r.base, r.order, r.big = data, 0, base, order, big
	r.ptr, r.addrSize, r.funcAddr = ptr, ptr.AddrSize, funcAddr
	r.codeAlign, r.dataAlign, r.fdeEnc = 1, 1, PEAbsPtr
	if cie != nil {
		r.codeAlign = cie.CodeAlign
		r.dataAlign = cie.DataAlign
		r.fdeEnc = PointerEncoding(cie.FDEEncoding)
		if cie.AddressSize != 0 {
			r.addrSize = int(cie.AddressSize)
		}
	}
}

// setLoc decodes a DW_CFA_set_loc operand at data[pos:].
func (r *InstructionReader) setLoc(pos int) (uint64, int, error) {
	p := *r.ptr
	p.Order, p.AddrSize, p.FuncAddr = r.order, r.addrSize, r.funcAddr
	return p.Decode(r.data, pos, r.fdeEnc, r.base)
}

// CIEInstructions returns a reader of cie's initial instructions.
//
// It is small enough to be inlined, so that a caller that keeps the reader
// local gets it on its stack (the evaluator calls it for every FDE).
func (f *Frames) CIEInstructions(cie *CIE) *InstructionReader {
	r := new(InstructionReader)
	r.ResetCIE(f, cie)
	return r
}

// FDEInstructions returns a reader of fde's instructions (not including its
// CIE's initial instructions). Like CIEInstructions it can be inlined.
func (f *Frames) FDEInstructions(fde *FDE) *InstructionReader {
	r := new(InstructionReader)
	r.ResetFDE(f, fde)
	return r
}

// ResetCIE makes r read cie's initial instructions, as
// Frames.CIEInstructions does, reusing r.
func (r *InstructionReader) ResetCIE(f *Frames, cie *CIE) {
	r.reset(cie.Initial, cie.InitialOffset, cie, f.Order, f.big, &f.ptr, 0)
}

// ResetFDE makes r read fde's instructions, as Frames.FDEInstructions
// does, reusing r.
func (r *InstructionReader) ResetFDE(f *Frames, fde *FDE) {
	r.reset(fde.Instructions, fde.InstructionsOffset, fde.CIE, f.Order, f.big, &f.ptr, fde.Start)
}

// Offset returns the section offset of the next instruction (when the
// reader was made by Frames.CIEInstructions or Frames.FDEInstructions; else
// the offset in data).
func (r *InstructionReader) Offset() uint64 { return r.base + uint64(r.pos) }

// BigEndian reports whether the section's byte order (Order) is
// big-endian: the order of the operands of DW_CFA_advance_loc2 and 4.
func (f *Frames) BigEndian() bool { return isBigEndian(f.Order) }

// isBigEndian reports whether order is big-endian, without allocating for
// the standard library's orders.
func isBigEndian(order binary.ByteOrder) bool {
	switch order {
	case binary.BigEndian:
		return true
	case binary.LittleEndian:
		return false
	}
	var b [2]byte
	b[1] = 1
	return order.Uint16(b[:]) == 1
}
