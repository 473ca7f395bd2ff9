package lower

import (
	"encoding/binary"
	"math"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// The fast path translates, in the correct mode, the functions whose CFI
// keeps to what compilers write for them: the CFA on SP or FP at an offset
// (on s390x, one its encoding gives back), FP saved on the stack or not,
// RA in its fixed slot (AMD64) or saved on the stack or not (AArch64,
// signed or not; s390x), the state remembered and restored a few levels
// deep. It reads the instruction bytes itself and keeps a few integers of
// state per FRE (fastRow) instead of decoding each instruction into a
// cfi.Instruction and each state into a row. Whatever else it meets
// (another register for the CFA, an expression, DW_CFA_set_loc, an operand
// too long, anything the translator would refuse), it gives up before it
// has changed anything and the function goes through the translator: the
// fast path makes the FREs the translator makes, or none. TestShortcuts
// and FuzzLower compare the two on every input.

// fastRow is the state of one FRE in the fast path: what a row holds when
// the CFA is SP or FP plus an offset, FP and (with RA tracking) RA are
// saved at CFA+offset or not, and (AMD64) RA is in its fixed slot.
type fastRow struct {
	pc      uint32 // the FRE's start, from the function start
	cfa     int32  // CFA offset (s390x: encoded, as rows keep it)
	fp      int32  // where FP is saved, from the CFA (fpSaved)
	ra      int32  // where RA is saved, from the CFA (raSaved)
	cfaOnFP bool   // the CFA is FP+cfa, else SP+cfa
	fpSaved bool
	raSaved bool // with RA tracking only: on AMD64 RA stays in its fixed slot
	mangled bool // AArch64: RA is signed
}

// fastStackDepth is how many remembered states the fast path keeps (the
// translator has no limit; compilers nest one or two).
const fastStackDepth = 8

// fastCIE is the fast path's start state for the FDEs of one CIE.
type fastCIE struct {
	cie   *cfi.CIE
	start fastRow
	merge bool // the state after the CIE is a merge candidate
	ok    bool // the fast path can start from it
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
	for i := range l.fastCIEs {
		if c := &l.fastCIEs[i]; c.cie == f.CIE {
			return c
		}
	}
	c := &l.fastCIEs[l.fastNext]
	l.fastNext = (l.fastNext + 1) % cieCacheSize
	*c = l.fastFromCIE(f)
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
	c.start = fastRow{cfa: int32(cur.cfaOffset), cfaOnFP: cur.cfaReg == r.fp, mangled: cur.mangledRA}
	if cur.fpLoc == locStack {
		c.start.fpSaved, c.start.fp = true, int32(cur.fpOffset)
	}
	if cur.raLoc == locStack {
		c.start.raSaved, c.start.ra = true, int32(cur.raOffset)
	}
	c.merge = cur.mergeCandidate
	c.ok = true
	return c
}

// fastULEB decodes an unsigned LEB128 number of at most 5 bytes at
// data[pos:]: its value and the position after it, or n == 0 for a
// longer or truncated one (left to the translator).
func fastULEB(data []byte, pos int) (v uint64, n int) {
	for shift := uint(0); shift < 35; shift += 7 {
		if pos >= len(data) {
			return 0, 0
		}
		b := data[pos]
		pos++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, pos
		}
	}
	return 0, 0
}

// fastSLEB is fastULEB for a signed LEB128 number.
func fastSLEB(data []byte, pos int) (v int64, n int) {
	start := pos
	u, pos := fastULEB(data, pos)
	if pos == 0 {
		return 0, 0
	}
	bits := uint(7 * (pos - start))
	return int64(u<<(64-bits)) >> (64 - bits), pos
}

// fastOffsetOperand decodes the offset operand at data[pos:] of
// DW_CFA_offset_extended(_sf), def_cfa(_sf) or def_cfa_offset(_sf): a
// signed one (the _sf forms) factored by the data alignment factor da, an
// unsigned one as it is (offset_extended's caller factors it). n == 0 when
// the fast path cannot decode it.
func fastOffsetOperand(data []byte, pos int, signed bool, da int64) (off int64, n int) {
	if signed {
		s, n := fastSLEB(data, pos)
		return s * da, n
	}
	u, n := fastULEB(data, pos)
	return int64(u), n
}

// lowerFast translates f on the fast path and appends its SFrame FDE to
// the packed section sec. ok is false when it cannot: then nothing has
// changed and the translator must.
func (l *Lowerer) lowerFast(f *cfi.FDE, sec *emit.Section) (ok bool, err error) {
	if f.CIE == nil || f.Size > math.MaxUint32 {
		return false, nil
	}
	c := l.fastStart(f)
	if !c.ok {
		return false, nil
	}
	r := &l.regs
	sp, fp, ra := r.sp, r.fp, r.ra
	ca, da := f.CIE.CodeAlign, f.CIE.DataAlign
	size := f.Size
	data := f.Instructions
	cur := c.start
	changed := !c.merge // the translator's !mergeCandidate
	// The FREs are packed as they are committed, but each one only once
	// the next starts at another address (a zero advance replaces it):
	// pending holds it until then. On giving up, Abort takes back what
	// was written.
	w, err := sec.BeginPacked(emit.FDE{Size: uint32(size), Info: emit.FuncInfo(emit.PCInc, emit.FRETypeFor(uint32(size)), r.aarch64 && f.CIE.BKey, f.CIE.Signal)})
	if err != nil {
		return true, err
	}
	var pending fastRow
	hasPending := false
	var stack [fastStackDepth]fastRow
	depth := 0
	var pc uint64
	for p := 0; p < len(data); {
		b := data[p]
		var delta uint64 // an advance, with advanced set
		advanced := false
		switch b >> 6 {
		case 1: // DW_CFA_advance_loc
			delta, advanced = uint64(b&0x3f), true
			p++
		case 2: // DW_CFA_offset
			u, n := fastULEB(data, p+1)
			if n == 0 || !l.fastOffset(&cur, uint64(b&0x3f), int64(u)*da) {
				return l.fastFailed(&w, nil)
			}
			changed = changed || uint64(b&0x3f) == fp || uint64(b&0x3f) == ra
			p = n
			continue
		case 3: // DW_CFA_restore
			changed = l.fastRestore(&cur, &c.start, uint64(b&0x3f)) || changed
			p++
			continue
		}
		if !advanced {
			switch cfi.Op(b) {
			case cfi.OpNop:
				p++
			case cfi.OpAdvanceLoc1:
				if p+1 >= len(data) {
					return l.fastFailed(&w, nil)
				}
				delta, advanced = uint64(data[p+1]), true
				p += 2
			case cfi.OpAdvanceLoc2:
				if p+2 >= len(data) {
					return l.fastFailed(&w, nil)
				}
				delta, advanced = uint64(l.order.Uint16(data[p+1:])), true
				p += 3
			case cfi.OpAdvanceLoc4:
				if p+4 >= len(data) {
					return l.fastFailed(&w, nil)
				}
				delta, advanced = uint64(l.order.Uint32(data[p+1:])), true
				p += 5
			case cfi.OpOffsetExtended, cfi.OpOffsetExtendedSF:
				reg, n := fastULEB(data, p+1)
				if n == 0 {
					return l.fastFailed(&w, nil)
				}
				off, n := fastOffsetOperand(data, n, cfi.Op(b) == cfi.OpOffsetExtendedSF, da)
				if cfi.Op(b) == cfi.OpOffsetExtended {
					off *= da // factored, unlike def_cfa's unsigned offsets
				}
				if n == 0 || !l.fastOffset(&cur, reg, off) {
					return l.fastFailed(&w, nil)
				}
				changed = changed || reg == fp || reg == ra
				p = n
			case cfi.OpRestoreExtended:
				reg, n := fastULEB(data, p+1)
				if n == 0 {
					return l.fastFailed(&w, nil)
				}
				changed = l.fastRestore(&cur, &c.start, reg) || changed
				p = n
			case cfi.OpUndefined:
				// Of FP or SP: refused; of RA: an outermost frame.
				reg, n := fastULEB(data, p+1)
				if n == 0 || reg == ra || reg == sp || reg == fp {
					return l.fastFailed(&w, nil)
				}
				p = n
			case cfi.OpSameValue:
				// Of RA on AMD64: not representable.
				reg, n := fastULEB(data, p+1)
				if n == 0 || reg == ra && !r.raTracking {
					return l.fastFailed(&w, nil)
				}
				switch reg {
				case fp:
					cur.fpSaved, cur.fp = false, 0
					changed = true
				case ra:
					cur.raSaved, cur.ra = false, 0
					changed = true
				}
				p = n
			case cfi.OpGNUWindowSave:
				if !r.aarch64 {
					return l.fastFailed(&w, nil)
				}
				cur.mangled = !cur.mangled
				changed = true
				p++
			case cfi.OpRegister:
				reg, n := fastULEB(data, p+1)
				if n == 0 || reg == sp || reg == fp || reg == ra {
					return l.fastFailed(&w, nil)
				}
				if _, n = fastULEB(data, n); n == 0 {
					return l.fastFailed(&w, nil)
				}
				p = n
			case cfi.OpRememberState:
				if depth == fastStackDepth {
					return l.fastFailed(&w, nil)
				}
				stack[depth] = cur
				depth++
				p++
			case cfi.OpRestoreState:
				if depth == 0 {
					return l.fastFailed(&w, nil)
				}
				depth--
				at := cur.pc
				cur = stack[depth]
				cur.pc = at
				changed = true
				p++
			case cfi.OpDefCFA, cfi.OpDefCFASF:
				reg, n := fastULEB(data, p+1)
				if n == 0 || reg != sp && reg != fp {
					return l.fastFailed(&w, nil)
				}
				off, n := fastOffsetOperand(data, n, cfi.Op(b) == cfi.OpDefCFASF, da)
				enc, ok := l.fastCFAOffset(off)
				if n == 0 || !ok {
					return l.fastFailed(&w, nil)
				}
				cur.cfaOnFP, cur.cfa = reg == fp, enc
				changed = true
				p = n
			case cfi.OpDefCFARegister:
				reg, n := fastULEB(data, p+1)
				if n == 0 || reg != sp && reg != fp {
					return l.fastFailed(&w, nil)
				}
				cur.cfaOnFP = reg == fp
				changed = true
				p = n
			case cfi.OpDefCFAOffset, cfi.OpDefCFAOffsetSF:
				off, n := fastOffsetOperand(data, p+1, cfi.Op(b) == cfi.OpDefCFAOffsetSF, da)
				enc, ok := l.fastCFAOffset(off)
				if n == 0 || !ok {
					return l.fastFailed(&w, nil)
				}
				cur.cfa = enc
				changed = true
				p = n
			case cfi.OpGNUArgsSize:
				// gas takes .cfi_escape 0x2e <n> with a one-byte n when n
				// is 0 or the CFA is FP-based; the translator refuses the
				// rest.
				if p+1 >= len(data) || data[p+1] >= 0x80 || data[p+1] != 0 && !cur.cfaOnFP {
					return l.fastFailed(&w, nil)
				}
				p += 2
			default:
				return l.fastFailed(&w, nil)
			}
			if !advanced {
				continue
			}
		}
		next := pc + delta*ca // delta < 1<<32, ca <= 1<<20: no overflow
		if next > size {
			return l.fastFailed(&w, nil)
		}
		if changed {
			// The translator's commit: a row at the address of the last
			// one replaces it.
			if hasPending && pending.pc != cur.pc {
				if ok, err := l.packFast(&w, &pending); !ok || err != nil {
					return l.fastFailed(&w, err)
				}
			}
			pending, hasPending = cur, true
			changed = false
		}
		pc = next
		cur.pc = uint32(pc)
	}
	if hasPending && pending.pc != cur.pc {
		if ok, err := l.packFast(&w, &pending); !ok || err != nil {
			return l.fastFailed(&w, err)
		}
	}
	if ok, err := l.packFast(&w, &cur); !ok || err != nil {
		return l.fastFailed(&w, err)
	}
	return true, w.End()
}

// fastFailed ends lowerFast when it gives up: the function, taken back
// from the section, goes to the translator (or, on an error of the
// section, that error).
func (l *Lowerer) fastFailed(w *emit.PackedFDE, err error) (bool, error) {
	w.Abort()
	if err != nil {
		return true, err
	}
	return false, nil
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
		cur.fpSaved, cur.fp = true, int32(off)
	case r.ra:
		if !r.raTracking {
			return off == int64(r.fixedRA)
		}
		if !fitsInt32(off) {
			return false
		}
		cur.raSaved, cur.ra = true, int32(off)
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
		cur.fpSaved, cur.fp = start.fpSaved, start.fp
		return true
	case reg == r.ra && r.raTracking:
		cur.raSaved, cur.ra = start.raSaved, start.ra
		return true
	}
	return false
}

// packFast appends the FRE of row f to the function w packs, as encode
// makes it of the translator's row and AppendPacked packs it: FRE start,
// then data words for the CFA offset, RA's (when saved) and FP's (when
// saved), in the smallest size that holds them. ok is false when the
// translator must lower the function instead: FP saved without RA (which
// it refuses) or more FREs than an FDE holds.
func (l *Lowerer) packFast(w *emit.PackedFDE, f *fastRow) (ok bool, err error) {
	r := &l.regs
	if r.raTracking && !r.s390x && f.fpSaved && !f.raSaved || w.Len() == maxFREs {
		return false, nil
	}
	var words [3]int32
	words[0] = f.cfa
	n := 1
	switch {
	case f.raSaved:
		words[n] = f.ra
		n++
	case r.s390x && f.fpSaved:
		// s390x: FP saved without RA gets a padding word for RA.
		words[n] = emit.RAOffsetInvalid
		n++
	}
	if f.fpSaved {
		words[n] = f.fp
		n++
	}
	return true, w.AddMin(f.pc, !f.cfaOnFP, f.mangled, words[:n])
}

// byteOrder returns the byte order of frames (little-endian without one).
func byteOrder(frames *cfi.Frames) binary.ByteOrder {
	if frames == nil || frames.Order == nil {
		return binary.LittleEndian
	}
	return frames.Order
}
