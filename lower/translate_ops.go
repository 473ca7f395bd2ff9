package lower

// The translator's handling of each CFI instruction: gas's
// sframe_do_cfi_insn and the sframe_xlate_do_* functions it calls.

import (
	"math"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// step translates one instruction.
func (x *translator) step(ins *cfi.Instruction, fdeStart uint64) error {
	r := &x.r
	switch ins.Op {
	case cfi.OpAdvanceLoc, cfi.OpAdvanceLoc1, cfi.OpAdvanceLoc2, cfi.OpAdvanceLoc4:
		pc := x.pc + ins.Delta
		if pc < x.pc {
			return refuse("CFI advances past the function end")
		}
		return x.advance(pc)
	case cfi.OpSetLoc:
		x.setLoc = true
		if ins.Delta < fdeStart {
			return refuse("DW_CFA_set_loc to %#x, before the function start %#x", ins.Delta, fdeStart)
		}
		return x.advance(ins.Delta - fdeStart)

	case cfi.OpDefCFA, cfi.OpDefCFASF:
		return x.defCFA(ins.Reg, ins.Offset)
	case cfi.OpDefCFARegister:
		return x.defCFARegister(ins.Reg)
	case cfi.OpDefCFAOffset, cfi.OpDefCFAOffsetSF:
		return x.defCFAOffset(ins.Offset)

	case cfi.OpOffset, cfi.OpOffsetExtended, cfi.OpOffsetExtendedSF:
		return x.offset(ins.Op, ins.Reg, ins.Offset)
	case cfi.OpValOffset, cfi.OpValOffsetSF:
		return x.valOffset(ins.Reg, ins.Offset, ".cfi_val_offset")
	case cfi.OpRegister:
		return x.register(ins.Reg, ins.Reg2)

	case cfi.OpRememberState:
		if !x.hasCur {
			return refuse(".cfi_remember_state without prior SFrame FRE state")
		}
		if !x.gas {
			// DWARF remembers a stack of states; gas only one.
			x.stack = append(x.stack, newRow(0))
			x.stack[len(x.stack)-1].inherit(&x.cur)
			return nil
		}
		x.remember = newRow(0)
		x.remember.inherit(&x.cur)
		x.hasRemember = true
		return nil
	case cfi.OpRestoreState:
		// gas asserts that remember_state came first and that no other op
		// changed the scratch FRE since the last advance.
		if x.gas && !x.hasRemember || !x.gas && len(x.stack) == 0 {
			return refuse("DW_CFA_restore_state without DW_CFA_remember_state")
		}
		if err := x.needCur(ins.Op); err != nil {
			return err
		}
		if x.gas {
			x.cur.inherit(&x.remember)
		} else {
			x.cur.inherit(&x.stack[len(x.stack)-1])
			x.stack = x.stack[:len(x.stack)-1]
		}
		x.cur.mergeCandidate = false
		return nil
	case cfi.OpRestore, cfi.OpRestoreExtended:
		return x.restore(ins.Op, ins.Reg)

	case cfi.OpUndefined:
		switch ins.Reg {
		case r.fp, r.sp:
			return refuse("%s reg %d in .cfi_undefined", r.name(ins.Reg), uint32(ins.Reg))
		case r.ra:
			if err := x.needCur(ins.Op); err != nil {
				return err
			}
			x.cur.raUndefined = true
			x.cur.raBad = noReason
			x.cur.mergeCandidate = false
		}
		return nil
	case cfi.OpSameValue:
		switch {
		case !r.raTracking && ins.Reg == r.ra:
			// AMD64: "RA is the value of the RA column" cannot be said in
			// SFrame (gas ignores the op and keeps RA at CFA-8).
			if err := x.needCur(ins.Op); err != nil {
				return err
			}
			x.cur.raBad = x.bad("RA reg %d in DW_CFA_same_value", uint32(ins.Reg))
			if !x.gas {
				x.cur.raUndefined = false
			}
		case r.raTracking && ins.Reg == r.ra:
			if err := x.needCur(ins.Op); err != nil {
				return err
			}
			x.cur.raLoc, x.cur.raOffset, x.cur.raUndefined = locNone, 0, false
			x.cur.raBad = noReason
			x.cur.mergeCandidate = false
		case ins.Reg == r.fp:
			if err := x.needCur(ins.Op); err != nil {
				return err
			}
			x.cur.fpLoc, x.cur.fpOffset = locNone, 0
			x.cur.fpBad = noReason
			x.cur.mergeCandidate = false
		}
		return nil

	case cfi.OpGNUWindowSave:
		if !r.aarch64 {
			return refuse(".cfi_window_save")
		}
		if err := x.needCur(ins.Op); err != nil {
			return err
		}
		x.cur.mangledRA = !x.cur.mangledRA
		x.cur.mergeCandidate = false
		return nil
	case cfi.OpAArch64NegateRAStateWithPC:
		if r.aarch64 {
			return refuse(".cfi_negate_ra_state_with_pc")
		}
		return x.escape(ins)

	case cfi.OpNop, cfi.OpDefCFAExpression, cfi.OpExpression, cfi.OpValExpression,
		cfi.OpGNUArgsSize, cfi.OpGNUNegativeOffsetExtended:
		// gas has no directive for these: in its output they come from
		// .cfi_escape, whose raw bytes decide.
		return x.escape(ins)
	}
	return x.escape(ins)
}

// encodeCFAOffset applies the s390x CFA offset adjustment
// (SFRAME_V2_S390X_CFA_OFFSET_ENCODE).
func (x *translator) encodeCFAOffset(off int64) int64 {
	if x.r.s390x {
		return emit.S390XCFAOffsetEncode(off)
	}
	return off
}

func fitsInt32(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

func (x *translator) defCFA(reg uint64, off int64) error {
	if !x.hasCur {
		x.cur = newRow(0)
		x.hasCur = true
	}
	enc := x.encodeCFAOffset(off)
	if !fitsInt32(enc) {
		return refuse(".cfi_def_cfa with unsupported offset value")
	}
	if reg != x.r.sp && reg != x.r.fp {
		if !x.r.flex {
			return refuse("non-SP/FP register %d in .cfi_def_cfa", uint32(reg))
		}
		x.flex = true
	}
	x.cur.cfaReg, x.cur.cfaOffset, x.cur.cfaDeref = reg, enc, false
	x.cur.cfaBad = x.checkCFAOffset(off, enc)
	x.cur.mergeCandidate = false
	return nil
}

func (x *translator) defCFARegister(reg uint64) error {
	if err := x.needCur(cfi.OpDefCFARegister); err != nil {
		return err
	}
	if reg != x.r.sp && reg != x.r.fp {
		if !x.r.flex {
			return refuse("non-SP/FP register %d in .cfi_def_cfa_register", uint32(reg))
		}
		x.flex = true
	}
	x.cur.cfaReg = reg
	switch {
	case x.gas:
		// Quirk: the offset comes from the last committed FRE, not from
		// the scratch FRE, so a def_cfa_offset at the same PC is lost.
		if last := x.last(); last != nil {
			x.cur.cfaOffset = last.cfaOffset
		}
	case x.cur.cfaDeref:
		// From an expression back to register+offset: DWARF's offset is
		// the one def_cfa_offset set since (0 if none).
		x.cur.cfaOffset = x.cur.cfaExprOff
		x.cur.cfaBad = noReason
	}
	x.cur.cfaDeref = false
	x.cur.mergeCandidate = false
	return nil
}

func (x *translator) defCFAOffset(off int64) error {
	if err := x.needCur(cfi.OpDefCFAOffset); err != nil {
		return err
	}
	if x.cur.cfaReg == regInvalid {
		return refuse(".cfi_def_cfa_offset without CFA base register in effect")
	}
	enc := x.encodeCFAOffset(off)
	if !fitsInt32(enc) {
		return refuse(".cfi_def_cfa_offset with unsupported offset value")
	}
	x.cur.mergeCandidate = false
	if !x.gas && x.cur.cfaDeref {
		// The CFA is an expression: DWARF keeps the offset for a later
		// def_cfa_register, the rule itself does not change.
		x.cur.cfaExprOff = enc
		return nil
	}
	// gas: cfa_deref_p is kept, so after a DRAP *(rbp-8) CFA the new
	// offset applies to the dereferenced rule.
	x.cur.cfaOffset = enc
	x.cur.cfaBad = x.checkCFAOffset(off, enc)
	return nil
}

// checkCFAOffset notes, in correct mode, a CFA offset the s390x encoding
// (off-160)/8, decoded in 32 bits, does not give back (gas truncates).
func (x *translator) checkCFAOffset(off, enc int64) reason {
	if x.r.s390x && int64(emit.S390XCFAOffsetDecode(int32(enc))) != off {
		return x.bad("CFA offset %d not representable on s390x (stored as (offset-160)/8 in 32 bits)", off)
	}
	return noReason
}

func (x *translator) offset(op cfi.Op, reg uint64, off int64) error {
	r := &x.r
	if err := x.needCur(op); err != nil {
		return err
	}
	if !r.flex && !r.raTracking && reg == r.ra && off != int64(r.fixedRA) {
		return refuse("%s register %d in .cfi_offset", r.name(reg), uint32(reg))
	}
	c := &x.cur
	switch reg {
	case r.fp:
		c.fpLoc, c.fpOffset, c.fpReg, c.fpDeref = locStack, off, regInvalid, true
		c.fpBad = noReason
		c.mergeCandidate = false
	case r.ra:
		if !r.raTracking && off == int64(r.fixedRA) {
			// Back to the ABI's fixed RA slot. gas: ra_undefined_p
			// stays; DWARF: RA is defined again.
			c.raLoc, c.raReg, c.raDeref = locNone, regInvalid, false
			if !x.gas {
				c.raUndefined = false
			}
			c.raBad = noReason
		} else {
			c.raLoc, c.raOffset, c.raReg, c.raDeref = locStack, off, regInvalid, true
			c.raUndefined = false
			c.raBad = noReason
			if !r.raTracking && r.flex {
				x.flex = true
			}
		}
		c.mergeCandidate = false
	}
	return nil
}

// valOffset is sframe_xlate_do_val_offset; what names the directive in the
// warning.
func (x *translator) valOffset(reg uint64, off int64, what string) error {
	r := &x.r
	if reg == r.fp || (r.raTracking && reg == r.ra) || (reg == r.sp && off != r.spValOff) {
		return refuse("%s with %s reg %d", what, r.name(reg), uint32(reg))
	}
	if reg == r.ra && !x.gas {
		// AMD64: gas ignores it, RA stays at CFA-8.
		if err := x.needCur(cfi.OpValOffset); err != nil {
			return err
		}
		x.cur.raBad = x.bad("%s with %s reg %d", what, r.name(reg), uint32(reg))
		x.cur.raUndefined = false
	}
	return nil
}

func (x *translator) register(r1, r2 uint64) error {
	r := &x.r
	if r.flex && (r1 == r.fp || r1 == r.ra) {
		if err := x.needCur(cfi.OpRegister); err != nil {
			return err
		}
		c := &x.cur
		if r1 == r.fp {
			c.fpLoc, c.fpOffset, c.fpReg, c.fpDeref = locReg, 0, r2, false
			c.fpBad = noReason
		} else {
			c.raLoc, c.raOffset, c.raReg, c.raDeref = locReg, 0, r2, false
			c.raUndefined = false
			c.raBad = noReason
		}
		c.mergeCandidate = false
		x.flex = true
		return nil
	}
	if r1 == r.ra || r1 == r.fp || (r1 == r.sp && !r.s390x) {
		return refuse("%s register %d in .cfi_register", r.name(r1), uint32(r1))
	}
	return nil
}

// restore is sframe_xlate_do_restore. gas: the reference state is the
// first committed FRE (the state at the first advance, FDE ops before it
// included), or the scratch FRE when none is committed yet. Correct mode:
// the rule after the CIE's initial instructions, as DWARF says, for FP and
// RA on every ABI.
func (x *translator) restore(op cfi.Op, reg uint64) error {
	r := &x.r
	if reg != r.fp && !(reg == r.ra && (r.raTracking || !x.gas)) {
		return nil
	}
	if err := x.needCur(op); err != nil {
		return err
	}
	if !x.gas {
		cie := newRow(0) // a restore inside the CIE: no rule
		if x.cieDone {
			cie = x.cie
		}
		c := &x.cur
		if reg == r.fp {
			c.fpLoc, c.fpReg, c.fpOffset, c.fpDeref = cie.fpLoc, cie.fpReg, cie.fpOffset, cie.fpDeref
			c.fpBad = cie.fpBad
		} else {
			if !r.raTracking && x.sameRA(c, &cie) {
				// gas ignores this op on AMD64 (no FRE starts); so do we
				// when it changes nothing.
				return nil
			}
			c.raLoc, c.raReg, c.raOffset, c.raDeref = cie.raLoc, cie.raReg, cie.raOffset, cie.raDeref
			c.raUndefined, c.raBad = cie.raUndefined, cie.raBad
		}
		c.mergeCandidate = false
		return nil
	}
	cie := &x.cur
	if len(x.fres) > 0 {
		cie = &x.fres[0]
	}
	c := &x.cur
	if reg == r.fp {
		// Only the location and offset: fp_reg and fp_deref_p stay.
		c.fpLoc, c.fpOffset = cie.fpLoc, cie.fpOffset
	} else {
		c.raLoc, c.raOffset, c.raUndefined = cie.raLoc, cie.raOffset, cie.raUndefined
	}
	c.mergeCandidate = false
	return nil
}

// sameRA reports whether a and b give the same RA rule.
func (x *translator) sameRA(a, b *row) bool {
	if a.raLoc != b.raLoc || a.raUndefined != b.raUndefined || x.text(a.raBad) != x.text(b.raBad) {
		return false
	}
	switch a.raLoc {
	case locReg:
		return a.raReg == b.raReg && a.raOffset == b.raOffset && a.raDeref == b.raDeref
	case locStack:
		return a.raOffset == b.raOffset && a.raDeref == b.raDeref
	}
	return true
}
