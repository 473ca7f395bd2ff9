package lower

import (
	"github.com/sframe-gen/sframe-gen/emit"
)

// controlWord is a flex control word in gas's unsigned int arithmetic (the
// register is truncated to 32 bits and not masked).
func controlWord(reg uint64, deref, regP bool) uint32 {
	return emit.FlexControlWord(uint32(reg), deref, regP)
}

// wordSize is gas's sframe_get_fre_dataword_size for one FRE: the smallest
// size that holds the CFA offset, the FP offset if FP is on the stack, with
// RA tracking the RA offset if RA is on the stack (else on s390x the RA
// padding word when FP is on the stack), and for flex FDEs the control
// words of register rules, read unsigned. ok is false beyond 32 bits.
// gas leaves out an AMD64 flex RA offset, which appendWords then
// truncates; unless gasCompat, it counts.
func (r *regs) wordSize(f *row, flex, gasCompat bool) (size emit.DataWordSize, ok bool) {
	size, ok = emit.DataWordSizeFor(f.cfaOffset)
	grow := func(s emit.DataWordSize, fits bool) {
		ok = ok && fits
		if s > size {
			size = s
		}
	}
	if f.fpLoc == locStack {
		grow(emit.DataWordSizeFor(f.fpOffset))
	}
	if r.raTracking {
		if f.raLoc == locStack {
			grow(emit.DataWordSizeFor(f.raOffset))
		} else if r.s390x && f.fpLoc == locStack {
			grow(emit.DataWordSizeFor(emit.RAOffsetInvalid))
		}
	}
	if flex && !gasCompat {
		// Every offset word written (register rules' offsets too).
		if f.raLoc != locNone {
			grow(emit.DataWordSizeFor(f.raOffset))
		}
		if f.fpLoc != locNone {
			grow(emit.DataWordSizeFor(f.fpOffset))
		}
	}
	if flex {
		grow(emit.UnsignedDataWordSizeFor(uint64(controlWord(f.cfaReg, f.cfaDeref, f.cfaReg != regInvalid))))
		if f.raLoc == locReg {
			grow(emit.UnsignedDataWordSizeFor(uint64(controlWord(f.raReg, f.raDeref, true))))
		}
		if f.fpLoc == locReg {
			grow(emit.UnsignedDataWordSizeFor(uint64(controlWord(f.fpReg, f.fpDeref, true))))
		}
	}
	return size, ok
}

// appendWords appends the data words of one FRE, in the order CFA, RA, FP
// (output_sframe_row_entry_datawords), truncated to size as gas's out_one,
// out_two and out_four store them, and sign-extended as emit keeps them.
func (r *regs) appendWords(dst []int32, f *row, flex bool, size emit.DataWordSize) []int32 {
	w := func(v int64) { dst = append(dst, emit.SignExtend(uint32(v), size)) }
	if flex {
		w(int64(controlWord(f.cfaReg, f.cfaDeref, true)))
		w(f.cfaOffset)
		switch {
		case f.raLoc != locNone:
			reg := uint64(0)
			if f.raLoc == locReg {
				reg = f.raReg
			}
			w(int64(controlWord(reg, f.raDeref, f.raLoc == locReg)))
			w(f.raOffset)
		case f.fpLoc != locNone:
			w(emit.RAOffsetInvalid) // padding: no RA rule
		}
		if f.fpLoc != locNone {
			reg := uint64(0)
			if f.fpLoc == locReg {
				reg = f.fpReg
			}
			w(int64(controlWord(reg, f.fpDeref, f.fpLoc == locReg)))
			w(f.fpOffset)
		}
		return dst
	}
	w(f.cfaOffset)
	if r.raTracking {
		if f.raLoc == locStack {
			w(f.raOffset)
		} else if r.s390x && f.fpLoc == locStack {
			w(emit.RAOffsetInvalid) // padding: FP saved, RA not
		}
	}
	if f.fpLoc == locStack {
		w(f.fpOffset)
	}
	return dst
}
