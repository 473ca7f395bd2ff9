package lower

import "github.com/sframe-gen/sframe-gen/cfi"

// DWARF expression opcodes gas recognizes inside .cfi_escape.
const (
	opBreg0  = 0x70 // DW_OP_breg0
	opBreg6  = 0x76 // DW_OP_breg6 (rbp on x86-64)
	opBreg31 = 0x8f // DW_OP_breg31
	opDeref  = 0x06 // DW_OP_deref
)

// escape is sframe_xlate_do_cfi_escape, applied to an instruction gas can
// only have received as .cfi_escape bytes. gas accepts a few exact byte
// shapes, each item one byte; anything else drops the function with
// ".cfi_escape with op (0x..)".
func (x *translator) escape(ins *cfi.Instruction) error {
	raw := ins.Raw
	if len(raw) == 0 {
		return refuse("CFI insn %v (%#x)", ins.Op, uint8(ins.Op))
	}
	first := raw[0]
	ok := false
	var err error
	switch first {
	case byte(cfi.OpNop):
		ok = true
	case byte(cfi.OpDefCFAExpression):
		ok, err = x.escapeDefCFAExpr(raw)
	case byte(cfi.OpExpression):
		ok, err = x.escapeExpr(raw)
	case byte(cfi.OpGNUArgsSize):
		ok, err = x.escapeArgsSize(raw)
	case byte(cfi.OpValExpression):
		if valEncodedAddr(ins.Expr) {
			// .cfi_val_encoded_addr, a gas directive of its own.
			return refuse("CFI insn CFI_val_encoded_addr (0x105)")
		}
	}
	if err != nil {
		return err
	}
	if !ok {
		return refuse(".cfi_escape with op (%#x)", first)
	}
	return nil
}

// gasByteSLEB is how gas reads a one-byte escape item as an SLEB128: the
// item is stored in a little-endian int64 and decoded from there, so a byte
// with bit 7 set ends at the following zero byte and is positive.
func gasByteSLEB(b byte) int64 {
	if b&0x80 != 0 {
		return int64(b & 0x7f)
	}
	if b&0x40 != 0 {
		return int64(b) - 0x80
	}
	return int64(b)
}

// escapeDefCFAExpr accepts exactly 0f 03 76 <off> 06 on x86-64: the GCC
// DRAP rule CFA = *(rbp + off), which needs a flex FDE.
func (x *translator) escapeDefCFAExpr(raw []byte) (bool, error) {
	if len(raw) != 5 || raw[1] != 3 {
		return false, nil
	}
	if !x.r.amd64 || raw[2] != opBreg6 || raw[4] != opDeref || raw[3]&0x80 != 0 {
		// gas refuses an offset byte with bit 7 set (a multi-byte
		// SLEB128, which would take the DW_OP_deref in).
		return false, nil
	}
	if err := x.needCur(cfi.OpDefCFAExpression); err != nil {
		return false, err
	}
	x.cur.cfaBad = noReason
	x.flex = true
	x.cur.cfaReg = x.r.fp
	x.cur.cfaOffset = gasByteSLEB(raw[3])
	x.cur.cfaDeref = true
	x.cur.cfaExprOff = 0
	x.cur.mergeCandidate = false
	return true, nil
}

// escapeExpr accepts exactly 10 <reg> 02 <op> <off>. For reg == FP it keeps
// gas's behaviour on every target, including its bug: the deref flag is
// always set and the FDE becomes flex even on AArch64, with base register
// rbp only for x86-64 DW_OP_breg6 and SFRAME_FRE_REG_INVALID otherwise.
func (x *translator) escapeExpr(raw []byte) (bool, error) {
	if len(raw) != 5 || raw[2] != 2 {
		return false, nil
	}
	if err := x.needCur(cfi.OpExpression); err != nil {
		return false, err
	}
	r := &x.r
	reg := uint64(raw[1])
	switch {
	case reg == r.fp:
		fpReg := uint64(regInvalid)
		if r.amd64 && raw[3] == opBreg6 {
			fpReg = r.fp
		}
		// gas writes a flex FP rule with an invalid register for
		// anything but x86-64 DW_OP_breg6, and makes AArch64 (which has
		// no flex FDEs in gas) flex too.
		why := noReason
		switch {
		case !r.flex:
			why = x.bad(".cfi_escape DW_CFA_expression with %s reg %d", r.name(reg), uint32(reg))
		case raw[3] < opBreg0 || raw[3] > opBreg31 || raw[4]&0x80 != 0:
			why = x.bad("DW_CFA_expression for FP reg %d: only DW_OP_breg<n> with a one-byte offset is representable", uint32(reg))
		case !x.gas:
			fpReg = uint64(raw[3] - opBreg0)
		}
		x.cur.fpBad = why
		x.flex = true
		c := &x.cur
		c.fpLoc, c.fpOffset, c.fpReg, c.fpDeref = locReg, gasByteSLEB(raw[4]), fpReg, true
		c.mergeCandidate = false
	case reg == r.sp || (r.raTracking && reg == r.ra) || reg == x.cur.cfaReg:
		return true, refuse(".cfi_escape DW_CFA_expression with %s reg %d", r.name(reg), uint32(reg))
	case reg == r.ra && !x.gas:
		// AMD64: gas ignores it, RA stays at CFA-8.
		x.cur.raBad = x.bad(".cfi_escape DW_CFA_expression with %s reg %d", r.name(reg), uint32(reg))
		x.cur.raUndefined = false
	}
	return true, nil
}

// escapeArgsSize accepts exactly 2e <n> when n is 0 or the CFA is FP-based.
func (x *translator) escapeArgsSize(raw []byte) (bool, error) {
	if len(raw) != 2 {
		return false, nil
	}
	if raw[1] == 0 {
		return true, nil
	}
	if err := x.needCur(cfi.OpGNUArgsSize); err != nil {
		return false, err
	}
	return x.cur.cfaReg == x.r.fp, nil
}

// valEncodedAddr reports whether a DW_CFA_val_expression block has the shape
// gas writes for .cfi_val_encoded_addr: DW_OP_addr and an 8-byte address,
// or DW_OP_GNU_encoded_addr, the pointer encoding and a 2, 4 or 8 byte
// value.
func valEncodedAddr(expr []byte) bool {
	const (
		opAddr           = 0x03
		opGNUEncodedAddr = 0xf1
	)
	switch {
	case len(expr) == 9 && expr[0] == opAddr:
		return true
	case len(expr) >= 2 && expr[0] == opGNUEncodedAddr:
		size := 0
		switch expr[1] & 7 {
		case 0: // DW_EH_PE_absptr
			size = 8
		case 2: // udata2
			size = 2
		case 3: // udata4
			size = 4
		case 4: // udata8
			size = 8
		}
		return size != 0 && len(expr) == 2+size
	}
	return false
}
