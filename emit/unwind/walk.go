package unwind

import "github.com/sframe-gen/sframe-gen/emit"

// Walk walks the stack of a thread stopped with registers regs (all known,
// Regs.Known set accordingly), appending its frames to frames, innermost
// first, and says how the walk ended. It allocates nothing beyond growing
// frames.
func (w *Walker) Walk(regs *Regs, frames []Frame) ([]Frame, End) {
	// Two register sets, swapped from frame to frame: a Regs is 272
	// bytes, and copying it for every frame cost a tenth of a walk.
	var a, b Regs
	cur, next := &a, &b
	*cur = *regs
	w.blockLen = 0
	exact := true
	for n := 0; ; n++ {
		if n >= w.maxFrames {
			return frames, End{Reason: EndMaxFrames, PC: cur.PC}
		}
		sp, _ := cur.Get(w.abi.StackPointer())
		f := Frame{PC: cur.PC, SP: sp, Exact: exact}
		look := cur.PC
		if !exact {
			look-- // inside the call instruction
		}
		f.Module = w.moduleAt(look)
		end, ok := w.step(cur, next, &f, look)
		if f.Module >= 0 {
			f.Module = w.index[f.Module] // the caller's
		}
		frames = append(frames, f)
		if !ok {
			end.PC = cur.PC
			return frames, end
		}
		if next.PC == 0 {
			return frames, End{Reason: EndZeroRA, PC: cur.PC}
		}
		nsp, _ := next.Get(w.abi.StackPointer())
		if !f.Signal && (nsp < sp || nsp == sp && next.PC == cur.PC) {
			return frames, End{Reason: EndStackOrder, PC: cur.PC}
		}
		exact = f.Signal
		cur, next = next, cur
	}
}

// step computes into next the registers of the caller of frame f
// (registers cur, looked up at PC look), marking f as a signal frame when
// it is one.
func (w *Walker) step(cur, next *Regs, f *Frame, look uint64) (End, bool) {
	if f.Module < 0 {
		if w.isSigreturn(cur.PC) {
			f.Signal = true
			return w.sigframe(cur, next)
		}
		return End{Reason: EndNoModule}, false
	}
	m := &w.modules[f.Module]
	if m.SFrame == nil {
		return End{Reason: EndNoSFrame}, false
	}
	l, ok := w.lookup(m.SFrame, look-m.Bias)
	if !ok {
		if fn, in := m.SFrame.Covering(look - m.Bias); (in && fn.FDE.Signal()) || w.isSigreturn(cur.PC) {
			f.Signal = true
			return w.sigframe(cur, next)
		}
		return End{Reason: EndNoFRE}, false
	}
	if l.Signal {
		f.Signal = true
		return w.sigframe(cur, next)
	}
	if l.Outermost {
		return End{Reason: EndOutermost}, false
	}
	return w.caller(cur, next, l)
}

// caller applies the rules of FRE fr to the registers cur, into next.
func (w *Walker) caller(cur, next *Regs, fr *emit.Frame) (End, bool) {
	next.Known = 0 // the values of unknown registers are never read
	cfa, end, ok := w.loc(cur, &fr.CFA, 0)
	if !ok {
		return end, false
	}
	spReg, fpReg := w.abi.StackPointer(), w.abi.FramePointer()
	ra, end, ok := w.value(cur, &fr.RA, cfa, raRule)
	if !ok {
		return end, false
	}
	if fr.RAMangled {
		ra &^= w.pacMask
	}
	next.PC = ra
	next.Set(spReg, uint64(int64(cfa)+spBias(w.abi)))
	if fp, _, ok := w.value(cur, &fr.FP, cfa, fpReg); ok {
		next.Set(fpReg, fp)
	}
	return End{}, true
}

// raRule stands for the return address's own register in value.
const raRule = ^uint32(0)

// value is the caller's value of a register whose rule is l: unchanged
// (LocSame: the register reg of cur; raRule: the return-address register)
// or l applied with the CFA cfa.
func (w *Walker) value(cur *Regs, l *emit.Loc, cfa uint64, reg uint32) (uint64, End, bool) {
	if l.Kind == emit.LocRule {
		return w.loc(cur, l, cfa)
	}
	if reg == raRule {
		r, has := raReg(w.abi)
		if !has {
			return 0, End{Reason: EndRAInRegister}, false
		}
		v, ok := cur.Get(r)
		if !ok {
			return 0, End{Reason: EndRAInRegister, Reg: r}, false
		}
		return v, End{}, true
	}
	v, ok := cur.Get(reg)
	if !ok {
		return 0, End{Reason: EndRegister, Reg: reg}, false
	}
	return v, End{}, true
}

// loc evaluates a LocRule: base (register or CFA) plus offset, and the word
// there with Deref.
func (w *Walker) loc(cur *Regs, l *emit.Loc, cfa uint64) (uint64, End, bool) {
	base := cfa
	if l.RegBase {
		v, ok := cur.Get(l.Reg)
		if !ok {
			return 0, End{Reason: EndRegister, Reg: l.Reg}, false
		}
		base = v
	}
	addr := uint64(int64(base) + l.Offset)
	if !l.Deref {
		return addr, End{}, true
	}
	v, ok := w.word(addr)
	if !ok {
		return 0, End{Reason: EndMemory, Addr: addr}, false
	}
	return v, End{}, true
}

// lookup is the frame of sf.Lookup(pc), kept in the walker's cache.
func (w *Walker) lookup(sf *emit.Reader, pc uint64) (*emit.Frame, bool) {
	if w.lookups == nil {
		w.lookups = new([lookupCache]cachedLookup)
	}
	c := &w.lookups[(pc^pc>>8)%lookupCache]
	if c.sf == sf && c.pc == pc {
		return &c.fr, true
	}
	l, ok := sf.Lookup(pc)
	if !ok {
		return nil, false
	}
	*c = cachedLookup{sf: sf, pc: pc, fr: l.Frame}
	return &c.fr, true
}
