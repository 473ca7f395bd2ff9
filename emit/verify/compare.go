package verify

import (
	"debug/elf"
	"fmt"
	"sort"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// sfPiece is a range of addresses over which the SFrame lookup gives the
// same FRE (fre -1: no FRE).
type sfPiece struct {
	lo, hi uint64
	fre    int
}

// cfPiece is a range over which the CFI gives one row (row nil: no CFI).
type cfPiece struct {
	lo, hi uint64
	row    *cfiRow
}

// compare checks every function of the section against the CFI.
func (c *checker) compare(frames *cfi.Frames) {
	side := &cfiSide{regs: regsFor(c.s.Header.ABI), order: c.order()}
	var fdes []*cfi.FDE
	if frames != nil {
		for _, f := range frames.FDEs {
			if f.Size > 0 {
				fdes = append(fdes, f)
			}
		}
	}
	sort.SliceStable(fdes, func(i, j int) bool {
		if fdes[i].Section != fdes[j].Section {
			return fdes[i].Section < fdes[j].Section
		}
		return fdes[i].Start < fdes[j].Start
	})
	c.r.CFIFunctions = len(fdes)
	for _, f := range fdes {
		c.r.CFIBytes += f.Size
	}
	var w walker
	for i := range c.fdes {
		fde := &c.fdes[i]
		if !c.ok[i] || fde.Type() > emit.FDEFlex ||
			fde.PCType() == emit.PCMask && fde.RepSize == 0 ||
			len(fde.FREs) == 0 && fde.Signal() {
			continue
		}
		c.compareFDE(i, frames, fdes, side, &w)
	}
	c.coverage(fdes)
}

// walker holds reusable storage for compareFDE.
type walker struct {
	sf     []sfPiece
	cf     []cfPiece
	rows   []cfiRow
	frames []frame
	undef  []bool
	bad    []bool
	acc    []Finding
}

// sframePieces splits [S, E) by the FRE a tracer would pick: the Linux
// kernel walks the FREs in order and takes the last one before the first
// whose start exceeds the PC offset (so an FRE is used from the largest
// start seen so far up to the next FRE's start). ok is false when a PCMASK
// FDE repeats more than maxMaskBlocks times.
func sframePieces(dst []sfPiece, fde *emit.FDE, S, E uint64) ([]sfPiece, bool) {
	dst = dst[:0]
	span := E - S
	block := span
	if fde.PCType() == emit.PCMask {
		block = uint64(fde.RepSize)
		if span/block > maxMaskBlocks {
			return dst, false
		}
	}
	if len(fde.FREs) == 0 {
		return append(dst, sfPiece{S, E, -1}), true
	}
	for base := uint64(0); base < span; base += block {
		end := min(block, span-base)
		// offsets [0, end) of this block
		var maxStart uint64
		if first := uint64(fde.FREs[0].StartAddr); first > 0 {
			dst = append(dst, sfPiece{S + base, S + base + min(first, end), -1})
		}
		for j := range fde.FREs {
			st := uint64(fde.FREs[j].StartAddr)
			maxStart = max(maxStart, st)
			next := end
			if j+1 < len(fde.FREs) {
				next = min(uint64(fde.FREs[j+1].StartAddr), end)
			}
			if maxStart < next {
				dst = append(dst, sfPiece{S + base + maxStart, S + base + next, j})
			}
		}
	}
	return dst, true
}

// cfiPieces lists the CFI rows over [S, E) of section sec, with nil rows
// for addresses no CFI FDE describes. The rows are copied into w.rows.
func (c *checker) cfiPieces(w *walker, frames *cfi.Frames, fdes []*cfi.FDE, side *cfiSide, sec int, S, E uint64) (first *cfi.FDE) {
	w.cf, w.rows = w.cf[:0], w.rows[:0]
	j := sort.Search(len(fdes), func(k int) bool {
		return fdes[k].Section > sec || fdes[k].Section == sec && fdes[k].Start >= S
	})
	for j > 0 && fdes[j-1].Section == sec && fdes[j-1].End() > S {
		j--
	}
	type span struct {
		lo, hi uint64
		row    int
	}
	var spans []span
	cur := S
	for ; j < len(fdes) && fdes[j].Section == sec && fdes[j].Start < E; j++ {
		f := fdes[j]
		if f.End() <= cur {
			continue
		}
		rows, err := side.rowsOf(frames, f)
		if err != nil {
			c.note(-1, "CFI rows of the FDE at .eh_frame offset %#x stop early: %v", f.Offset, err)
		}
		if first == nil && f.Start <= S {
			first = f
		}
		for k := range rows {
			lo, hi := max(rows[k].lo, cur), min(rows[k].hi, E)
			if lo >= hi {
				continue
			}
			w.rows = append(w.rows, rows[k])
			spans = append(spans, span{lo, hi, len(w.rows) - 1})
			cur = hi
		}
	}
	cur = S
	for _, s := range spans {
		if s.lo > cur {
			w.cf = append(w.cf, cfPiece{cur, s.lo, nil})
		}
		w.cf = append(w.cf, cfPiece{s.lo, s.hi, nil})
		cur = s.hi
	}
	if cur < E {
		w.cf = append(w.cf, cfPiece{cur, E, nil})
	}
	// Point at the copied rows only now: w.rows may have moved while growing.
	k := 0
	for i := range w.cf {
		if k < len(spans) && w.cf[i].lo == spans[k].lo && w.cf[i].hi == spans[k].hi {
			w.cf[i].row = &w.rows[spans[k].row]
			k++
		}
	}
	return first
}

// compareFDE checks SFrame FDE i against the CFI at every address.
func (c *checker) compareFDE(i int, frames *cfi.Frames, fdes []*cfi.FDE, side *cfiSide, w *walker) {
	fde := &c.fdes[i]
	h := &c.s.Header
	key := c.starts[i]
	S := key.addr
	E := S + uint64(fde.Size)
	if E < S {
		c.problem(KindFormat, i, "function [%#x, +%#x) wraps around the address space", S, fde.Size)
		return
	}
	if S == E {
		return
	}
	var ok bool
	w.sf, ok = sframePieces(w.sf, fde, S, E)
	if !ok {
		c.problem(KindConsumer, i, "PCMASK FDE repeats its %d-byte block more than %d times: not checked", fde.RepSize, maxMaskBlocks)
		return
	}
	first := c.cfiPieces(w, frames, fdes, side, key.section, S, E)

	// The SFrame side of each FRE, computed once.
	w.frames, w.undef, w.bad = w.frames[:0], w.undef[:0], w.bad[:0]
	for j := range fde.FREs {
		f, u, msg := sframeFrame(h, fde, &fde.FREs[j])
		w.frames = append(w.frames, f)
		w.undef = append(w.undef, u)
		w.bad = append(w.bad, msg != "") // reported by checkFDEs
	}
	w.acc = w.acc[:0]
	abi := h.ABI
	regs := side.regs
	if first != nil {
		cie := first.CIE
		if fde.Signal() != cie.Signal {
			w.add(KindMismatch, fmt.Sprintf("signal frame: SFrame says %v, CFI (CIE augmentation \"S\") says %v", fde.Signal(), cie.Signal), S, S)
		}
		if abi.IsAArch64() && fde.PAuthKeyB() != cie.BKey {
			w.add(KindMismatch, fmt.Sprintf("pointer authentication key: SFrame says %s, CFI says %s", keyName(fde.PAuthKeyB()), keyName(cie.BKey)), S, S)
		}
		if cie.RAColumn != regs.ra {
			w.add(KindMismatch, fmt.Sprintf("the CFI's return address column is %d, not the ABI's %d", cie.RAColumn, regs.ra), S, S)
		}
	}

	a, b := 0, 0
	for cur := S; cur < E && a < len(w.sf) && b < len(w.cf); {
		sp, cp := &w.sf[a], &w.cf[b]
		hi := min(sp.hi, cp.hi)
		switch {
		case sp.fre < 0 && len(fde.FREs) == 0:
			// An FDE without FREs gives no rule: right only where the CFI
			// has none either.
			if cp.row != nil && cp.row.f.cfa.kind != locUndefined {
				msg := "SFrame has no FRE here"
				if cp.row.cfaExpr == nil {
					msg += ", CFI says CFA " + cp.row.f.cfa.formatCFA(abi)
				} else {
					msg += ", CFI gives a CFA expression"
				}
				w.add(KindCoverage, msg, cur, hi)
			}
		case sp.fre < 0 || w.bad[sp.fre]:
			// no FRE (first FRE not at 0) or broken data words: reported
			// by checkFDEs
		case cp.row == nil && c.inPLT(cur) && abi.IsAArch64():
			c.compareA64PLT(w, w.frames[sp.fre], w.undef[sp.fre], cur, hi)
		case cp.row == nil && c.inPLT(cur):
			w.add(KindNote, "SFrame describes these PLT addresses, no CFI FDE does: not compared", cur, hi)
		case cp.row == nil:
			w.add(KindCoverage, "SFrame describes these addresses, no CFI FDE does", cur, hi)
		case cp.row.cfaExpr != nil && hi-cur > c.exprBudget:
			c.exprBudget = 0
			w.add(KindNote, "CFA expression reads the PC over more addresses than are evaluated one by one: not compared", cur, hi)
		case cp.row.cfaExpr != nil:
			c.exprBudget -= hi - cur
			for pc := cur; pc < hi; pc++ {
				cf := cp.row.f
				var corrected bool
				cf.cfa, corrected = c.cfaAtBoundary(side, cp.row.cfaExpr, pc)
				if corrected {
					w.add(KindNote, pltBoundaryNote, pc, pc+1)
				}
				w.compareFrames(abi, w.frames[sp.fre], w.undef[sp.fre], &cf, pc, pc+1)
			}
		default:
			w.compareFrames(abi, w.frames[sp.fre], w.undef[sp.fre], &cp.row.f, cur, hi)
		}
		cur = hi
		if sp.hi == hi {
			a++
		}
		if cp.hi == hi {
			b++
		}
	}

	pltGot := c.isPLTGot(fde, S, E)
	for _, f := range w.acc {
		f.InFunction, f.Section, f.Func, f.FDE = true, key.section, S, i
		if f.Kind == KindNote {
			c.r.Notes = append(c.r.Notes, f)
			continue
		}
		if pltGot && f.Msg == "CFA: SFrame says sp+16, CFI says sp+8" {
			f.Kind = KindNote
			f.Msg += " (GNU ld's fixed .plt.got FRE, bfd/elfxx-x86.c; the CFI is right: .plt.got entries run with the return address at sp)"
			c.r.Notes = append(c.r.Notes, f)
			continue
		}
		c.r.Problems = append(c.r.Problems, f)
	}
}

func keyName(b bool) string {
	if b {
		return "B"
	}
	return "A"
}

// isPLTGot reports whether fde is the PCMASK FDE GNU ld makes for an
// x86-64 .plt.got section: it covers the section exactly.
func (c *checker) isPLTGot(fde *emit.FDE, S, E uint64) bool {
	if c.rel || c.s.Header.ABI != emit.ABIAMD64LittleEndian || fde.PCType() != emit.PCMask {
		return false
	}
	s := c.f.Section(".plt.got")
	return s != nil && s.Type == elf.SHT_PROGBITS && s.Addr == S && s.Addr+s.Size == E
}

// inPLT reports whether addr lies in a linker PLT section (.plt,
// .plt.sec, .plt.got, .iplt) of a linked file.
func (c *checker) inPLT(addr uint64) bool {
	if c.rel {
		return false
	}
	for _, s := range c.f.Sections {
		switch s.Name {
		case ".plt", ".plt.sec", ".plt.got", ".iplt":
			if addr >= s.Addr && addr-s.Addr < s.Size {
				return true
			}
		}
	}
	return false
}

// add records a finding for [lo, hi), merged with an earlier one of the
// same message.
func (w *walker) add(k Kind, msg string, lo, hi uint64) {
	for i := range w.acc {
		if w.acc[i].Msg == msg {
			w.acc[i].End = max(w.acc[i].End, hi)
			w.acc[i].Bytes += hi - lo
			return
		}
	}
	w.acc = append(w.acc, Finding{Kind: k, Addr: lo, End: hi, Bytes: hi - lo, Msg: msg})
}

// compareFrames compares what SFrame and the CFI say for [lo, hi).
func (w *walker) compareFrames(abi emit.ABI, sf frame, sfUndefRA bool, cf *frame, lo, hi uint64) {
	cfUndef := cf.ra.kind == locUndefined
	switch {
	case sfUndefRA && cfUndef:
		return
	case sfUndefRA:
		w.add(KindMismatch, "RA: SFrame says undefined (outermost frame), CFI says "+cf.ra.format(abi), lo, hi)
		return
	case cfUndef:
		w.add(KindMismatch, "RA: SFrame says "+sf.ra.format(abi)+", CFI says undefined (outermost frame)", lo, hi)
		return
	}
	if !sf.cfa.equal(cf.cfa) {
		w.add(KindMismatch, "CFA: SFrame says "+sf.cfa.formatCFA(abi)+", CFI says "+cf.cfa.formatCFA(abi), lo, hi)
	}
	if !sf.ra.equal(cf.ra) && !(abi == emit.ABIAMD64LittleEndian && cf.ra.kind == locSame && cf.ra.unset &&
		sf.ra.equal(loc{kind: locRule, off: -8, deref: true})) {
		// (On AMD64 a CFI without any rule for the RA column, as after
		// ".cfi_startproc simple", is taken as the ABI's RA at CFA-8.)
		w.add(KindMismatch, "RA: SFrame says "+sf.ra.format(abi)+", CFI says "+cf.ra.format(abi), lo, hi)
	}
	if !sf.fp.equal(cf.fp) {
		w.add(KindMismatch, "FP: SFrame says "+sf.fp.format(abi)+", CFI says "+cf.fp.format(abi), lo, hi)
	}
	switch {
	case abi.IsAArch64() && sf.raMangled != cf.raMangled:
		w.add(KindMismatch, "RA signing: SFrame says "+mangled(sf.raMangled)+", CFI says "+mangled(cf.raMangled), lo, hi)
	case !abi.IsAArch64() && sf.raMangled:
		w.add(KindMismatch, "RA signing: SFrame says signed (mangled RA bit), which only AArch64 defines", lo, hi)
	}
}

func mangled(b bool) string {
	if b {
		return "signed"
	}
	return "not signed"
}

// coverage finds the CFI functions the section does not cover, or covers
// only in part.
func (c *checker) coverage(fdes []*cfi.FDE) {
	type iv struct {
		sec    int
		lo, hi uint64
	}
	var ivs []iv
	for i := range c.fdes {
		if c.ok[i] && c.fdes[i].Size > 0 {
			s := c.starts[i]
			ivs = append(ivs, iv{s.section, s.addr, s.addr + uint64(c.fdes[i].Size)})
		}
	}
	sort.Slice(ivs, func(i, j int) bool {
		if ivs[i].sec != ivs[j].sec {
			return ivs[i].sec < ivs[j].sec
		}
		return ivs[i].lo < ivs[j].lo
	})
	merged := ivs[:0]
	for _, v := range ivs {
		if n := len(merged); n > 0 && merged[n-1].sec == v.sec && v.lo <= merged[n-1].hi {
			merged[n-1].hi = max(merged[n-1].hi, v.hi)
			continue
		}
		merged = append(merged, v)
	}
	for _, f := range fdes {
		end := f.End()
		k := sort.Search(len(merged), func(k int) bool {
			return merged[k].sec > f.Section || merged[k].sec == f.Section && merged[k].hi > f.Start
		})
		var covered uint64
		gap := f.Start
		gapSet := false
		cur := f.Start
		for ; k < len(merged) && merged[k].sec == f.Section && merged[k].lo < end; k++ {
			lo, hi := max(merged[k].lo, f.Start), min(merged[k].hi, end)
			if lo > cur && !gapSet {
				gap, gapSet = cur, true
			}
			covered += hi - lo
			cur = hi
		}
		if !gapSet && cur < end {
			gap = cur
		}
		switch {
		case covered == 0:
			c.r.Uncovered = append(c.r.Uncovered, Function{Section: f.Section, Start: f.Start, Size: f.Size, Signal: f.CIE.Signal})
		case covered < f.Size:
			c.r.Problems = append(c.r.Problems, Finding{
				Kind: KindCoverage, InFunction: true, Section: f.Section, Func: f.Start,
				Addr: gap, End: gap, FDE: -1,
				Msg: fmt.Sprintf("SFrame covers %d of the %d bytes the CFI describes for this function", covered, f.Size),
			})
		}
	}
}
