package emit

import "fmt"

// LocKind says how a stack walker recovers a value of the caller's frame.
type LocKind uint8

// Kinds of Loc.
const (
	// LocSame: the value is unchanged (the FRE gives no rule for it).
	LocSame LocKind = iota
	// LocRule: the value is Base+Offset, or the word at that address when
	// Deref is set; Base is the CFA, or register Reg when RegBase is set.
	LocRule
)

// Loc is where a stack walker finds one value: the CFA, the return
// address or the frame pointer of the caller.
type Loc struct {
	Offset  int64
	Reg     uint32 // DWARF register number of the base, with RegBase
	Kind    LocKind
	RegBase bool // the base is register Reg; else the CFA
	Deref   bool // the value is the word at Base+Offset
}

// Frame is what an FRE tells a stack walker: how to compute the CFA, and
// where the return address and the frame pointer of the caller are.
type Frame struct {
	CFA Loc // always LocRule with RegBase, unless Outermost
	RA  Loc // LocRule (usually saved at CFA+offset), or LocSame
	FP  Loc
	// RAMangled: the return address is signed (AArch64 pointer
	// authentication) and must be authenticated before use.
	RAMangled bool
	// Outermost: the FRE has no data words, the return address is
	// undefined: this is the outermost frame, stop walking.
	Outermost bool
	// Signal: the function is a signal trampoline (its FDE's signal bit).
	Signal bool
}

// StackPointer and FramePointer return the DWARF register numbers of the
// stack and frame pointers of abi: the CFA base registers of default FDEs.
func (a ABI) StackPointer() uint32 {
	switch a {
	case ABIAMD64LittleEndian:
		return 7
	case ABIS390XBigEndian:
		return 15
	}
	return 31
}

// FramePointer returns the DWARF register number of abi's frame pointer.
func (a ABI) FramePointer() uint32 {
	switch a {
	case ABIAMD64LittleEndian:
		return 6
	case ABIS390XBigEndian:
		return 11
	}
	return 29
}

// Frame evaluates FRE e of function f as a stack walker does (SFrame v3
// specification, Appendix A; the data-word reading of the Linux kernel's
// unwinder), with the section's fixed RA and FP offsets. An error says the
// data words do not follow the layout of the FDE type and ABI.
func (h *Header) Frame(f *FDE, e *FRE) (Frame, error) {
	var fr Frame
	fr.Signal = f.Signal()
	if e.DataWordCount() == 0 {
		fr.Outermost = true
		return fr, nil
	}
	fr.RAMangled = e.MangledRA()
	w := e.Words
	n := len(w)
	abi := h.ABI
	cfaOff := func(v int32) int64 {
		if abi == ABIS390XBigEndian {
			return int64(S390XCFAOffsetDecode(v))
		}
		return int64(v)
	}
	fixed := func(off int8) Loc {
		if off != 0 {
			return Loc{Kind: LocRule, Offset: int64(off), Deref: true}
		}
		return Loc{}
	}
	// saved is the rule of a default FDE's RA or FP word v: at CFA+v, or in
	// version 2 on s390x, for an odd v, in register v>>1
	// (SFRAME_V2_S390X_OFFSET_IS_REGNUM).
	saved := func(v int32) Loc {
		if h.Version == Version2 && abi == ABIS390XBigEndian && v&1 != 0 {
			return Loc{Kind: LocRule, RegBase: true, Reg: uint32(v) >> 1}
		}
		return Loc{Kind: LocRule, Offset: int64(v), Deref: true}
	}
	switch f.Type() {
	case FDEDefault:
		base := abi.FramePointer()
		if e.BaseRegSP() {
			base = abi.StackPointer()
		}
		fr.CFA = Loc{Kind: LocRule, RegBase: true, Reg: base, Offset: cfaOff(w[0])}
		i := 1
		fr.RA = fixed(h.CFAFixedRAOffset)
		if h.CFAFixedRAOffset == 0 && i < n {
			if w[i] != RAOffsetInvalid {
				fr.RA = saved(w[i])
			}
			i++
		}
		fr.FP = fixed(h.CFAFixedFPOffset)
		if h.CFAFixedFPOffset == 0 && i < n {
			fr.FP = saved(w[i])
			i++
		}
		if i < n {
			return fr, fmt.Errorf("%d data words: %d left over for a default FDE of %s", n, n-i, abi)
		}
	case FDEFlex:
		if n < 2 {
			return fr, fmt.Errorf("flex FDE FRE with %d data word (at least 2: CFA control word and offset)", n)
		}
		ctl := e.UWord(0)
		reg, deref, regP := DecodeFlexControlWord(ctl)
		if !regP {
			return fr, fmt.Errorf("flex CFA control word %#x has no register (reg_p clear)", ctl)
		}
		fr.CFA = Loc{Kind: LocRule, RegBase: true, Reg: reg, Offset: cfaOff(w[1]), Deref: deref}
		i := 2
		rule := func(def int8) Loc {
			if n-i < 2 {
				return fixed(def)
			}
			c := e.UWord(i)
			i++
			if c == 0 { // padding: no rule, the default applies
				return fixed(def)
			}
			r, d, p := DecodeFlexControlWord(c)
			l := Loc{Kind: LocRule, RegBase: p, Reg: r, Offset: int64(w[i]), Deref: d}
			i++
			return l
		}
		fr.RA = rule(h.CFAFixedRAOffset)
		fr.FP = rule(h.CFAFixedFPOffset)
		if i < n {
			return fr, fmt.Errorf("%d data words: %d left over for a flex FDE", n, n-i)
		}
	default:
		return fr, fmt.Errorf("unknown FDE type %d", f.Type())
	}
	return fr, nil
}
