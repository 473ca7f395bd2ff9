package verify

import (
	"github.com/sframe-gen/sframe-gen/emit"
)

// sframeFrame evaluates one FRE as a stack tracer does (emit.Header.Frame,
// the reading every SFrame consumer of this project shares): the CFA, RA
// and FP rules it gives. undefRA is true for an FRE without data words (RA
// undefined: outermost frame), in which case nothing else is given. A
// non-empty problem means the data words do not follow the layout of the
// FDE type and ABI.
func sframeFrame(h *emit.Header, fde *emit.FDE, e *emit.FRE) (f frame, undefRA bool, problem string) {
	fr, err := h.Frame(fde, e)
	if fr.Outermost {
		return f, true, ""
	}
	f.raMangled = fr.RAMangled
	f.cfa, f.ra, f.fp = locOf(fr.CFA), locOf(fr.RA), locOf(fr.FP)
	if err != nil {
		return f, false, err.Error()
	}
	return f, false, ""
}

// locOf is l as a verify rule.
func locOf(l emit.Loc) loc {
	if l.Kind == emit.LocSame {
		return loc{kind: locSame}
	}
	return loc{kind: locRule, regP: l.RegBase, reg: uint64(l.Reg), off: l.Offset, deref: l.Deref}
}
