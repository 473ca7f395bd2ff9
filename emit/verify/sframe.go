package verify

import (
	"fmt"

	"github.com/sframe-gen/sframe-gen/emit"
)

// sframeFrame evaluates one FRE as a stack tracer does (SFrame v3 spec,
// Appendix A, with the data-word reading of the Linux kernel's
// __read_default_fre_datawords and __read_flex_fde_fre_datawords): the
// CFA, RA and FP rules it gives. undefRA is true for an FRE without data
// words (RA undefined: outermost frame), in which case nothing else is
// given. A non-empty problem means the data words do not follow the layout
// of the FDE type and ABI.
func sframeFrame(h *emit.Header, fde *emit.FDE, e *emit.FRE) (f frame, undefRA bool, problem string) {
	abi := h.ABI
	regs := regsFor(abi)
	if e.DataWordCount() == 0 {
		return f, true, ""
	}
	if e.MangledRA() {
		f.raMangled = true
	}
	w := e.Words
	n := len(w)
	cfaOff := func(v int32) int64 {
		if abi == emit.ABIS390XBigEndian {
			return int64(emit.S390XCFAOffsetDecode(v))
		}
		return int64(v)
	}
	// The header's fixed offsets apply when the FRE gives no word.
	fixed := func(off int8) loc {
		if off != 0 {
			return loc{kind: locRule, off: int64(off), deref: true}
		}
		return loc{kind: locSame}
	}
	// saved is the rule of a default FDE's RA or FP word v: at CFA+v, or
	// in version 2 on s390x, for an odd v, in register v>>1
	// (SFRAME_V2_S390X_OFFSET_IS_REGNUM).
	saved := func(v int32) loc {
		if h.Version == emit.Version2 && abi == emit.ABIS390XBigEndian && v&1 != 0 {
			return loc{kind: locRule, regP: true, reg: uint64(uint32(v) >> 1)}
		}
		return loc{kind: locRule, off: int64(v), deref: true}
	}
	switch fde.Type() {
	case emit.FDEDefault:
		base := regs.fp
		if e.BaseRegSP() {
			base = regs.sp
		}
		f.cfa = loc{kind: locRule, regP: true, reg: base, off: cfaOff(w[0])}
		i := 1
		f.ra = fixed(h.CFAFixedRAOffset)
		if h.CFAFixedRAOffset == 0 && i < n {
			if w[i] != emit.RAOffsetInvalid {
				f.ra = saved(w[i])
			}
			i++
		}
		f.fp = fixed(h.CFAFixedFPOffset)
		if h.CFAFixedFPOffset == 0 && i < n {
			f.fp = saved(w[i])
			i++
		}
		if i < n {
			return f, false, fmt.Sprintf("%d data words: %d left over for a default FDE of %s", n, n-i, abi)
		}
	case emit.FDEFlex:
		if n < 2 {
			return f, false, fmt.Sprintf("flex FDE FRE with %d data word (at least 2: CFA control word and offset)", n)
		}
		ctl := e.UWord(0)
		reg, deref, regP := emit.DecodeFlexControlWord(ctl)
		if !regP {
			return f, false, fmt.Sprintf("flex CFA control word %#x has no register (reg_p clear)", ctl)
		}
		f.cfa = loc{kind: locRule, regP: true, reg: uint64(reg), off: cfaOff(w[1]), deref: deref}
		i := 2
		rule := func(def int8) loc {
			if n-i < 2 {
				return fixed(def)
			}
			c := e.UWord(i)
			i++
			if c == 0 { // padding: no rule, the default applies
				return fixed(def)
			}
			r, d, p := emit.DecodeFlexControlWord(c)
			l := loc{kind: locRule, regP: p, reg: uint64(r), off: int64(w[i]), deref: d}
			i++
			return l
		}
		f.ra = rule(h.CFAFixedRAOffset)
		f.fp = rule(h.CFAFixedFPOffset)
		if i < n {
			return f, false, fmt.Sprintf("%d data words: %d left over for a flex FDE", n, n-i)
		}
	default:
		return f, false, fmt.Sprintf("unknown FDE type %d", fde.Type())
	}
	return f, false, ""
}
