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
	spReg := w.abi.StackPointer()
	for n := 0; ; n++ {
		if n >= w.maxFrames {
			return frames, End{Reason: EndMaxFrames, PC: cur.PC}
		}
		sp, _ := cur.Get(spReg)
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
		nsp, _ := next.Get(spReg)
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
	l, ok, sigFunc := w.lookup(m.SFrame, look-m.Bias)
	if !ok {
		if sigFunc || w.isSigreturn(cur.PC) {
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
	var end End    // why the walk ends, set where value fails
	cfa, ok := w.value(cur, &fr.CFA, 0, cfaRule, &end)
	if !ok {
		return end, false
	}
	spReg, fpReg := w.abi.StackPointer(), w.abi.FramePointer()
	ra, ok := w.value(cur, &fr.RA, cfa, raRule, &end)
	if !ok {
		return end, false
	}
	if fr.RAMangled {
		ra &^= w.pacMask
	}
	next.PC = ra
	next.Set(spReg, uint64(int64(cfa)+spBias(w.abi)))
	if fp, ok := w.value(cur, &fr.FP, cfa, fpReg, &end); ok {
		next.Set(fpReg, fp)
	}
	return End{}, true
}

// raRule stands for the return address's own register in value, cfaRule
// for the CFA (whose rule is applied whatever its Kind).
const (
	raRule  = ^uint32(0)
	cfaRule = ^uint32(1)
)

// value is the caller's value of a register whose rule is l: l applied
// with the CFA cfa (LocRule, and the CFA's rule: base register or CFA,
// plus offset, and the word there with Deref), or unchanged (LocSame: the
// register reg of cur; raRule: the return-address register). Where it
// cannot say, it sets *end to why.
func (w *Walker) value(cur *Regs, l *emit.Loc, cfa uint64, reg uint32, end *End) (uint64, bool) {
	if l.Kind == emit.LocRule || reg == cfaRule {
		base := cfa
		if l.RegBase {
			v, ok := cur.Get(l.Reg)
			if !ok {
				*end = End{Reason: EndRegister, Reg: l.Reg}
				return 0, false
			}
			base = v
		}
		addr := uint64(int64(base) + l.Offset)
		if !l.Deref {
			return addr, true
		}
		v, ok := w.word(addr)
		if !ok {
			*end = End{Reason: EndMemory, Addr: addr}
		}
		return v, ok
	}
	if reg == raRule {
		r, has := raReg(w.abi)
		if !has {
			*end = End{Reason: EndRAInRegister}
			return 0, false
		}
		v, ok := cur.Get(r)
		if !ok {
			*end = End{Reason: EndRAInRegister, Reg: r}
		}
		return v, ok
	}
	v, ok := cur.Get(reg)
	if !ok {
		*end = End{Reason: EndRegister, Reg: reg}
	}
	return v, ok
}

// lookup is the frame of sf.Lookup(pc), kept in the walker's cache, or,
// where Lookup finds none, whether a function with its FDE's signal bit
// set covers pc (sf.Covering: a signal trampoline kept without FREs); both
// answers are kept.
func (w *Walker) lookup(sf *emit.Reader, pc uint64) (fr *emit.Frame, ok, sigFunc bool) {
	if w.lookups == nil {
		w.lookups = new([lookupCache]cachedLookup)
	}
	c := &w.lookups[(pc^pc>>8)%lookupCache]
	if c.sf != sf || c.pc != pc {
		l, ok := sf.Lookup(pc)
		*c = cachedLookup{sf: sf, pc: pc, fr: l.Frame, ok: ok}
		if !ok {
			fn, in := sf.Covering(pc)
			c.sigFunc = in && fn.FDE.Signal()
		}
	}
	return &c.fr, c.ok, c.sigFunc
}
