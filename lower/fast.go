package lower

import (
	"math"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// The fast path translates, in the correct mode, the functions whose CFI
// keeps to what compilers write for them: the CFA on SP or FP at an offset
// (on s390x, one its encoding gives back), FP saved on the stack or not,
// RA in its fixed slot (AMD64) or saved on the stack or not (AArch64,
// signed or not; s390x), the state remembered and restored a few levels
// deep. It keeps a few integers of state per FRE (fastRow) instead of a
// row, and walks the instruction bytes itself: the most frequent
// instructions it takes in its loop, their operands decoded by
// cfi.ULEB128 (inlined there), the others fastOp decodes with cfi's
// decoder (InstructionReader.DecodeAt), the translator's. Whatever else
// it meets (another register for the CFA, an expression, DW_CFA_set_loc,
// an operand out of range, an instruction that does not decode, anything
// the translator would refuse), it gives up before it has changed
// anything and the function goes through the translator: the fast path
// makes the FREs the translator makes, or none. TestShortcuts,
// TestFastOperands and FuzzLower compare the two on every input;
// BenchmarkLowerLibLLVM/default and translator measure what it is
// worth (docs/performance.md).

// fastRow is the state of one FRE in the fast path (its start address
// apart): what a row holds when the CFA is SP or FP plus an offset, FP and
// (with RA tracking) RA are saved at CFA+offset or not, and (AMD64) RA is
// in its fixed slot. It is four words, copied word by word (copyFrom): a
// row written field by field and then copied whole would stall the copy
// (its wide load cannot take the bytes from the narrower stores still in
// flight).
type fastRow struct {
	cfa   int32 // CFA offset (s390x: encoded, as rows keep it)
	fp    int32 // where FP is saved, from the CFA (fastFPSaved)
	ra    int32 // where RA is saved, from the CFA (fastRASaved)
	flags fastFlags
}

// fastFlags are the yes-or-no parts of a fastRow.
type fastFlags uint32

const (
	fastCFAOnFP fastFlags = 1 << iota // the CFA is FP+cfa, else SP+cfa
	fastFPSaved
	fastRASaved // with RA tracking only: on AMD64 RA stays in its fixed slot
	fastMangled // AArch64: RA is signed
)

// fastStackDepth is how many remembered states the fast path keeps (the
// translator has no limit; compilers nest one or two).
const fastStackDepth = 8

// fastCIE is the fast path's start state for the FDEs of one CIE.
type fastCIE struct {
	cie   *cfi.CIE
	start fastRow
	merge bool // the state after the CIE is a merge candidate
	ok    bool // the fast path can start from it
	big   bool // the CFI is big-endian (DW_CFA_advance_loc2's operand)
}

// fastUsable reports whether the fast path may translate for l: the
// correct mode, a CFI section to take the alignment factors from.
func (l *Lowerer) fastUsable() bool {
	return (l.regs.amd64 || l.regs.aarch64 || l.regs.s390x) && !l.opt.GasCompat && !l.opt.noFast && l.frames != nil
}

// fastStart returns the fast path's state after the initial instructions
// of cie, computed by the translator once per CIE (cached like
// ciesDone), for the function f.
func (l *Lowerer) fastStart(f *cfi.FDE) *fastCIE {
	if c := l.fastLast; c != nil && c.cie == f.CIE {
		return c // most often: functions in a row share their CIE
	}
	return l.fastStartCached(f)
}

// fastStartCached is fastStart from the cache, or a new entry of it.
func (l *Lowerer) fastStartCached(f *cfi.FDE) *fastCIE {
	for i := range l.fastCIEs {
		if c := &l.fastCIEs[i]; c.cie == f.CIE {
			l.fastLast = c
			return c
		}
	}
	c := &l.fastCIEs[l.fastNext]
	l.fastNext = (l.fastNext + 1) % cieCacheSize
	*c = l.fastFromCIE(f)
	l.fastLast = c
	return c
}

// fastFromCIE runs the initial instructions of f's CIE through the
// translator and turns the state it reaches into a fast start state, when
// the fast path can go on from it (a state saveCIE would cache, that
// fastRow can hold).
func (l *Lowerer) fastFromCIE(f *cfi.FDE) fastCIE {
	cie := f.CIE
	c := fastCIE{cie: cie}
	ca, da := cie.CodeAlign, cie.DataAlign
	if cie.RAColumn != l.regs.ra || ca > 1<<20 || da > 1<<20 || da < -(1<<20) {
		return c
	}
	x := &l.x
	x.reset(l.regs, math.MaxUint32)
	x.gas = false
	if err := l.run(l.frames.CIEInstructions(cie), f, cie.Initial, cie.InitialOffset); err != nil {
		return c
	}
	cur := &x.cur
	if len(x.fres) != 0 || x.dropped != 0 || x.advanced || x.setLoc || len(x.stack) != 0 ||
		x.noCFA || x.unrepresentable != "" || len(x.reasons) > 1 || x.flex || !x.hasCur {
		return c
	}
	r := &l.regs
	if cur.cfaReg != r.sp && cur.cfaReg != r.fp || cur.cfaDeref || !fitsInt32(cur.cfaOffset) || cur.raUndefined ||
		cur.raLoc == locReg || cur.raLoc == locStack && (!r.raTracking || !cur.raDeref || !fitsInt32(cur.raOffset)) ||
		cur.fpLoc == locReg || cur.fpLoc == locStack && (!cur.fpDeref || !fitsInt32(cur.fpOffset)) {
		return c
	}
	c.start = fastRow{cfa: int32(cur.cfaOffset)}
	if cur.cfaReg == r.fp {
		c.start.flags |= fastCFAOnFP
	}
	if cur.mangledRA {
		c.start.flags |= fastMangled
	}
	if cur.fpLoc == locStack {
		c.start.flags |= fastFPSaved
		c.start.fp = int32(cur.fpOffset)
	}
	if cur.raLoc == locStack {
		c.start.flags |= fastRASaved
		c.start.ra = int32(cur.raOffset)
	}
	c.merge = cur.mergeCandidate
	c.big = l.frames.BigEndian()
	c.ok = true
	return c
}

// fastRun is lowerFast's state while it runs one function's
// instructions. It lives in the Lowerer, in memory, rather than in local
// variables: there are more of those than registers, and the compiler
// would move them between the two at every instruction decoded.
type fastRun struct {
	cur     fastRow
	pending fastRow // the FRE committed last, not yet kept (see lowerFast)
	pendPC  uint32  // where pending starts
	pend    bool    // pending holds an FRE
	changed bool    // cur differs from the FRE committed last
	depth   int     // remembered states in stack
	stack   [fastStackDepth]fastRow
	start   *fastRow // the state after the CIE
	da      int64    // the data alignment factor
	big     bool     // the CFI is big-endian
	w       emit.MinWriter

	// fastOp decodes with in and dec, dec set to the function's
	// instructions (fde) the first time it is needed (decoding).
	fde      *cfi.FDE
	decoding bool
	dec      cfi.InstructionReader
	in       cfi.Instruction
}

// lowerFast translates f on the fast path and appends its SFrame FDE to
// the section sec. ok is false when it cannot: then nothing has
// changed and the translator must.
func (l *Lowerer) lowerFast(f *cfi.FDE, sec *emit.Section) (ok bool, err error) {
	if f.CIE == nil || f.Size > math.MaxUint32 {
		return false, nil
	}
	c := l.fastStart(f)
	if !c.ok {
		return false, nil
	}
	ca := f.CIE.CodeAlign
	size := f.Size
	data := f.Instructions
	st := &l.fastRun
	st.cur.copyFrom(&c.start)
	st.pend, st.changed, st.depth = false, !c.merge, 0 // the translator's !mergeCandidate
	st.start, st.da, st.big = &c.start, f.CIE.DataAlign, c.big
	st.fde, st.decoding = f, false
	// The FREs are packed as they are committed, but each one only once
	// the next starts at another address (a zero advance replaces it):
	// pending holds it until then. Until End the section is as it was.
	info := emit.FuncInfo(emit.PCInc, emit.FRETypeFor(uint32(size)), l.regs.aarch64 && f.CIE.BKey, f.CIE.Signal)
	if err := st.w.Begin(sec, &emit.FDE{Size: uint32(size), Info: info}); err != nil {
		return true, err
	}
	var pc uint64
	for p := 0; p < len(data); {
		var delta uint64 // an advance, in bytes
		switch b := data[p]; {
		case b>>6 == 1: // DW_CFA_advance_loc, the most frequent
			delta = uint64(b&0x3f) * ca // ca <= 1<<20: no overflow
			p++
		case b == byte(cfi.OpDefCFAOffset) && !l.regs.s390x:
			// DW_CFA_def_cfa_offset (a push or pop; as frequent): kept
			// as it is but on s390x (fastCFAOffset).
			u, next, err := cfi.ULEB128(data, p+1)
			if err != nil || u > math.MaxInt32 {
				return false, nil
			}
			st.cur.cfa = int32(u)
			st.changed = true
			p = next
			continue
		case b>>6 == 2 && uint64(b&0x3f) != l.regs.ra:
			// DW_CFA_offset of FP or another register (saved in the
			// prologue): fastOffset's work, with an operand small
			// enough that its product by da (|da| <= 1<<20) cannot
			// overflow.
			u, next, err := cfi.ULEB128(data, p+1)
			if err != nil || u >= fastOperandLimit {
				return false, nil
			}
			if uint64(b&0x3f) == l.regs.fp {
				off := int64(u) * st.da
				if !fitsInt32(off) {
					return false, nil
				}
				st.cur.flags |= fastFPSaved
				st.cur.fp = int32(off)
				st.changed = true
			}
			p = next
			continue
		case b == byte(cfi.OpNop): // the padding at the end
			p++
			continue
		case b == byte(cfi.OpAdvanceLoc1) && p+1 < len(data):
			delta = uint64(data[p+1]) * ca
			p += 2
		case b == byte(cfi.OpRememberState):
			// The state kept for a function's other exits, then
			// DW_CFA_advance_loc2 and DW_CFA_restore: after the
			// instructions above, the most frequent (in a tree of C
			// libraries, 19 in 20 of the others). fastOp's work,
			// without its decoder.
			if st.depth == fastStackDepth {
				return false, nil
			}
			st.stack[st.depth].copyFrom(&st.cur)
			st.depth++
			p++
			continue
		case b == byte(cfi.OpRestoreState):
			if st.depth == 0 {
				return false, nil
			}
			st.depth--
			st.cur.copyFrom(&st.stack[st.depth])
			st.changed = true
			p++
			continue
		case b == byte(cfi.OpAdvanceLoc2) && p+2 < len(data):
			u := uint64(data[p+1]) | uint64(data[p+2])<<8
			if st.big {
				u = u>>8 | u&0xff<<8
			}
			delta = u * ca // u < 1<<16, ca <= 1<<20: no overflow
			p += 3
		case b>>6 == 3: // DW_CFA_restore
			st.changed = l.fastRestore(&st.cur, st.start, uint64(b&0x3f)) || st.changed
			p++
			continue
		default:
			var advanced bool
			if p, delta, advanced = l.fastOp(st, p); p == 0 {
				return false, nil
			}
			if !advanced {
				continue
			}
		}
		next := pc + delta // delta < 1<<52: no overflow
		if next > size {
			return false, nil
		}
		if st.changed {
			// The translator's commit: a row at the address of the last
			// one replaces it.
			if st.pend && st.pendPC != uint32(pc) {
				// AMD64's usual FRE here (usualFRE), the others by
				// packFast.
				if info, n, w0, w1 := usualFRE(&st.pending); !l.usualOK(&st.w) || !st.w.AddSmall(st.pendPC, info, n, w0, w1) {
					if !l.packFast(&st.w, st.pendPC, &st.pending) {
						return false, nil
					}
				}
			}
			st.pending.copyFrom(&st.cur)
			st.pendPC, st.pend, st.changed = uint32(pc), true, false
		}
		pc = next
		// A push or pop: DW_CFA_def_cfa_offset follows 99% of the
		// advances (libLLVM.so: 1,135,445 of 1,143,369), taken here
		// when its operand is one byte rather than at the top of the
		// loop.
		if p+1 < len(data) && data[p] == byte(cfi.OpDefCFAOffset) && data[p+1] < 0x80 && !l.regs.s390x {
			st.cur.cfa = int32(data[p+1])
			st.changed = true
			p += 2
		}
	}
	if st.pend && st.pendPC != uint32(pc) {
		if info, n, w0, w1 := usualFRE(&st.pending); !l.usualOK(&st.w) || !st.w.AddSmall(st.pendPC, info, n, w0, w1) {
			if !l.packFast(&st.w, st.pendPC, &st.pending) {
				return false, nil
			}
		}
	}
	if info, n, w0, w1 := usualFRE(&st.cur); !l.usualOK(&st.w) || !st.w.AddSmall(uint32(pc), info, n, w0, w1) {
		if !l.packFast(&st.w, uint32(pc), &st.cur) {
			return false, nil
		}
	}
	return true, st.w.End()
}

// copyFrom sets r to src field by field: src was most often just written
// field by field, and a copy of the whole would wait for those writes to
// reach the cache (see fastRow).
func (r *fastRow) copyFrom(src *fastRow) {
	r.cfa, r.fp, r.ra, r.flags = src.cfa, src.fp, src.ra, src.flags
}

// fastOperandLimit bounds the DW_CFA_offset operands lowerFast takes in
// place: with |da| <= 1<<20 their product cannot overflow.
const fastOperandLimit = 1 << 32

// fastOp applies the instruction at offset p of the function's
// instructions (any but those lowerFast takes in place), decoded by cfi's
// decoder, to st: it returns where the next instruction starts and, for
// an advance, its delta in bytes (advanced). next is 0 when the fast path
// cannot go on: an instruction it does not take, or one that does not
// decode (the translator then reports it).
func (l *Lowerer) fastOp(st *fastRun, p int) (next int, delta uint64, advanced bool) {
	if !st.decoding {
		st.dec.ResetFDE(l.frames, st.fde)
		st.decoding = true
	}
	in := &st.in
	next, err := st.dec.DecodeAt(p, in)
	if err != nil {
		return 0, 0, false
	}
	r := &l.regs
	cur := &st.cur
	switch in.Op {
	case cfi.OpAdvanceLoc, cfi.OpAdvanceLoc1, cfi.OpAdvanceLoc2, cfi.OpAdvanceLoc4:
		return next, in.Delta, true
	case cfi.OpOffset, cfi.OpOffsetExtended, cfi.OpOffsetExtendedSF:
		if !l.fastOffset(cur, in.Reg, in.Offset) {
			return 0, 0, false
		}
		st.changed = st.changed || in.Reg == r.fp || in.Reg == r.ra
	case cfi.OpRestore, cfi.OpRestoreExtended:
		st.changed = l.fastRestore(cur, st.start, in.Reg) || st.changed
	case cfi.OpUndefined:
		// Of FP or SP: refused; of RA: an outermost frame.
		if in.Reg == r.ra || in.Reg == r.sp || in.Reg == r.fp {
			return 0, 0, false
		}
	case cfi.OpSameValue:
		// Of RA on AMD64: not representable.
		if in.Reg == r.ra && !r.raTracking {
			return 0, 0, false
		}
		st.changed = fastSameValue(cur, r, in.Reg) || st.changed
	case cfi.OpGNUWindowSave:
		if !r.aarch64 {
			return 0, 0, false
		}
		cur.flags ^= fastMangled
		st.changed = true
	case cfi.OpRegister:
		if in.Reg == r.sp || in.Reg == r.fp || in.Reg == r.ra {
			return 0, 0, false
		}
	case cfi.OpRememberState:
		if st.depth == fastStackDepth {
			return 0, 0, false
		}
		st.stack[st.depth].copyFrom(cur)
		st.depth++
	case cfi.OpRestoreState:
		if st.depth == 0 {
			return 0, 0, false
		}
		st.depth--
		cur.copyFrom(&st.stack[st.depth])
		st.changed = true
	case cfi.OpDefCFA, cfi.OpDefCFASF, cfi.OpDefCFARegister, cfi.OpDefCFAOffset, cfi.OpDefCFAOffsetSF:
		if !l.fastDefCFA(cur, in) {
			return 0, 0, false
		}
		st.changed = true
	case cfi.OpGNUArgsSize:
		// gas takes .cfi_escape 0x2e <n> with a one-byte n when n is 0
		// or the CFA is FP-based; the translator refuses the rest.
		if len(in.Raw) != 2 || in.Offset != 0 && cur.flags&fastCFAOnFP == 0 {
			return 0, 0, false
		}
	default:
		return 0, 0, false
	}
	return next, 0, false
}

// fastDefCFA applies DW_CFA_def_cfa(_sf), def_cfa_register and
// def_cfa_offset(_sf) to cur; false when the fast path cannot (a CFA on
// another register than SP or FP, an offset the translator refuses).
func (l *Lowerer) fastDefCFA(cur *fastRow, in *cfi.Instruction) bool {
	r := &l.regs
	if in.Op != cfi.OpDefCFAOffset && in.Op != cfi.OpDefCFAOffsetSF {
		if in.Reg != r.sp && in.Reg != r.fp {
			return false
		}
		cur.flags = cur.flags&^fastCFAOnFP | fastIf(in.Reg == r.fp, fastCFAOnFP)
		if in.Op == cfi.OpDefCFARegister {
			return true
		}
	}
	enc, ok := l.fastCFAOffset(in.Offset)
	if ok {
		cur.cfa = enc
	}
	return ok
}

// fastSameValue applies DW_CFA_same_value of reg to cur: FP and (with RA
// tracking) RA are no longer saved. It reports whether that counts as a
// change.
func fastSameValue(cur *fastRow, r *regs, reg uint64) bool {
	switch reg {
	case r.fp:
		cur.flags &^= fastFPSaved
		cur.fp = 0
		return true
	case r.ra:
		cur.flags &^= fastRASaved
		cur.ra = 0
		return true
	}
	return false
}

// fastCFAOffset is a CFA offset as the row keeps it (s390x: encoded as
// (off-160)/8), or false when the translator refuses it or would give a
// reason (not in 32 bits; on s390x, not given back by the decoding).
func (l *Lowerer) fastCFAOffset(off int64) (int32, bool) {
	enc := off
	if l.regs.s390x {
		enc = emit.S390XCFAOffsetEncode(off)
	}
	if !fitsInt32(enc) || l.regs.s390x && int64(emit.S390XCFAOffsetDecode(int32(enc))) != off {
		return 0, false
	}
	return int32(enc), true
}

// fastOffset applies DW_CFA_offset of reg at off to cur, as the
// translator's offset does; false when the fast path cannot (AMD64: RA
// saved elsewhere than its fixed slot, a flex FDE; an offset beyond 32
// bits: refused).
func (l *Lowerer) fastOffset(cur *fastRow, reg uint64, off int64) bool {
	r := &l.regs
	switch reg {
	case r.fp:
		if !fitsInt32(off) {
			return false
		}
		cur.flags |= fastFPSaved
		cur.fp = int32(off)
	case r.ra:
		if !r.raTracking {
			return off == int64(r.fixedRA)
		}
		if !fitsInt32(off) {
			return false
		}
		cur.flags |= fastRASaved
		cur.ra = int32(off)
	}
	return true
}

// fastRestore applies DW_CFA_restore of reg to cur, as the translator's
// restore does: FP and (with RA tracking) RA go back to their rule after
// the CIE, start; it reports whether that counts as a change (on AMD64 the
// RA rule, always the fixed slot here, stays as it is).
func (l *Lowerer) fastRestore(cur, start *fastRow, reg uint64) bool {
	r := &l.regs
	switch {
	case reg == r.fp:
		cur.flags = cur.flags&^fastFPSaved | start.flags&fastFPSaved
		cur.fp = start.fp
		return true
	case reg == r.ra && r.raTracking:
		cur.flags = cur.flags&^fastRASaved | start.flags&fastRASaved
		cur.ra = start.ra
		return true
	}
	return false
}

// fastIf is flag when cond holds, else none.
func fastIf(cond bool, flag fastFlags) fastFlags {
	if cond {
		return flag
	}
	return 0
}

// usualOK reports whether w may take AMD64's usual FRE (usualFRE, with
// AddSmall): RA in its fixed slot, never signed, and room for one more FRE
// in the function.
func (l *Lowerer) usualOK(w *emit.MinWriter) bool { return !l.regs.raTracking && w.Len() != maxFREs }

// usualFRE returns the info byte, number of data words and words of the
// usual FRE of AMD64 for row f, made without a branch on the row: the CFA
// offset, then FP's offset when it is saved (fp is masked: a row keeps it 0
// when not saved, but it need not matter). lowerFast gives it to AddSmall
// where it packs an FRE (inlined there: packFast is too big to be, and
// calling it for every FRE took 6% of the fast path's instructions over a
// tree of C libraries); packFast packs the FREs AddSmall does not take.
func usualFRE(f *fastRow) (info uint8, n int, w0, w1 int32) {
	saved := int32(f.flags & fastFPSaved / fastFPSaved) // 0 or 1
	return uint8(1+saved)<<1 | uint8(f.flags&fastCFAOnFP^fastCFAOnFP), int(1 + saved), f.cfa, f.fp & -saved
}

// packFast adds the FRE of row f at pc to w, as encode makes it of the
// translator's row and AppendFDE appends it, when it is not AMD64's usual
// FRE that lowerFast packs itself (usualFRE): data words for the CFA
// offset, RA's (when saved) and FP's (when saved). It returns false when
// the translator must lower the function instead: FP saved without RA
// (which it refuses) or more FREs than an FDE holds.
func (l *Lowerer) packFast(w *emit.MinWriter, pc uint32, f *fastRow) bool {
	r := &l.regs
	if !r.raTracking && w.Len() != maxFREs {
		// AMD64's usual FRE with two-byte words (a big frame).
		if info, n, w0, w1 := usualFRE(f); w.AddSmall2(pc, info|uint8(emit.DataWord2B)<<5, n, w0, w1) {
			return true
		}
	}
	fpSaved, raSaved := f.flags&fastFPSaved != 0, f.flags&fastRASaved != 0
	if r.raTracking && !r.s390x && fpSaved && !raSaved || w.Len() == maxFREs {
		return false
	}
	n, w1, w2 := 1, int32(0), int32(0)
	switch {
	case raSaved:
		n, w1 = 2, f.ra
	case r.s390x && fpSaved:
		// s390x: FP saved without RA gets a padding word for RA.
		n, w1 = 2, emit.RAOffsetInvalid
	}
	if fpSaved {
		if n == 1 {
			w1 = f.fp
		} else {
			w2 = f.fp
		}
		n++
	}
	baseSP, mangled := f.flags&fastCFAOnFP == 0, f.flags&fastMangled != 0
	if w.AddSmall(pc, emit.FREInfo(baseSP, n, emit.DataWord1B, mangled), n, f.cfa, w1) ||
		w.AddSmall2(pc, emit.FREInfo(baseSP, n, emit.DataWord2B, mangled), n, f.cfa, w1) {
		return true
	}
	w.Add(pc, baseSP, mangled, n, f.cfa, w1, w2)
	return true
}
