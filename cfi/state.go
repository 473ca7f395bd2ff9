package cfi

// remember pushes the current rules.
func (it *RowIterator) remember() {
	if len(it.stack) >= maxStack {
		it.tooMany = true
		return
	}
	lo := len(it.stackRegs)
	it.stackRegs = append(it.stackRegs, it.row.Regs...)
	it.stack = append(it.stack, savedState{cfa: it.row.CFA, raMangled: it.row.RAMangled, lo: lo, hi: len(it.stackRegs)})
}

// restoreState pops the rules remember pushed last; the stack is not
// empty.
func (it *RowIterator) restoreState() {
	n := len(it.stack)
	s := it.stack[n-1]
	it.stack = it.stack[:n-1]
	it.row.CFA, it.row.RAMangled = s.cfa, s.raMangled
	it.row.Regs = append(it.row.Regs[:0], it.stackRegs[s.lo:s.hi]...)
	it.stackRegs = it.stackRegs[:s.lo]
}

// set gives register col the rule r.
func (it *RowIterator) set(col uint64, r Rule) {
	e := it.slot(col)
	if e == nil {
		return
	}
	e.Rule.Kind, e.Rule.Reg, e.Rule.Offset = r.Kind, r.Reg, r.Offset
	if e.Rule.Expr != nil || r.Expr != nil {
		e.Rule.Expr = r.Expr
	}
}

// setOffset is set for RuleOffset.
func (it *RowIterator) setOffset(col uint64, off int64) {
	e := it.slot(col)
	if e == nil {
		return
	}
	e.Rule.Kind, e.Rule.Reg, e.Rule.Offset = RuleOffset, 0, off
	if e.Rule.Expr != nil {
		e.Rule.Expr = nil
	}
}

// slot returns the entry of register col in it.row.Regs, inserted in
// column order if new; nil when the row has too many registers. Entries
// move field by field so that a pointer is written only where an
// expression is: pointer stores cost write barriers.
func (it *RowIterator) slot(col uint64) *RegisterRule {
	regs := it.row.Regs
	i := len(regs)
	for i > 0 && regs[i-1].Column > col {
		i--
	}
	if i > 0 && regs[i-1].Column == col {
		return &regs[i-1]
	}
	if len(regs) >= maxRegisters {
		it.tooMany = true
		return nil
	}
	if len(regs) < cap(regs) {
		regs = regs[:len(regs)+1]
	} else {
		regs = append(regs, RegisterRule{})
	}
	for j := len(regs) - 1; j > i; j-- {
		moveRule(&regs[j], &regs[j-1])
	}
	e := &regs[i]
	e.Column = col
	it.row.Regs = regs
	return e
}

// moveRule copies *src to *dst, storing the Expr pointer only if either
// has one.
func moveRule(dst, src *RegisterRule) {
	dst.Column = src.Column
	dst.Rule.Kind, dst.Rule.Reg, dst.Rule.Offset = src.Rule.Kind, src.Rule.Reg, src.Rule.Offset
	if dst.Rule.Expr != nil || src.Rule.Expr != nil {
		dst.Rule.Expr = src.Rule.Expr
	}
}

// restore gives register col its rule after the CIE's initial
// instructions, or none.
func (it *RowIterator) restore(col uint64) {
	for _, r := range it.init.regs {
		if r.Column == col {
			it.set(col, r.Rule)
			return
		}
	}
	regs := it.row.Regs
	for i := range regs {
		if regs[i].Column == col {
			for j := i; j+1 < len(regs); j++ {
				moveRule(&regs[j], &regs[j+1])
			}
			it.row.Regs = regs[:len(regs)-1]
			return
		}
	}
}
