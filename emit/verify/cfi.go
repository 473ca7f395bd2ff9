package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// cfiRow is one CFI row, normalized, for [lo, hi).
type cfiRow struct {
	lo, hi uint64
	f      frame
	// cfaExpr is the CFA expression when it reads the PC: the CFA must
	// then be evaluated at each address.
	cfaExpr []byte
}

// cfiSide turns rows of the CFI into frames for one ABI.
type cfiSide struct {
	regs  abiRegs
	order binary.ByteOrder
	it    cfi.RowIterator
	// the rows of the last FDE read, cached: PLT FDEs of SFrame share one
	// CFI FDE.
	last *cfi.FDE
	rows []cfiRow
	err  error
}

// rowsOf returns the normalized rows of fde (valid until the next call)
// and the error that stopped them; the error only the first time.
func (c *cfiSide) rowsOf(frames *cfi.Frames, fde *cfi.FDE) ([]cfiRow, error) {
	if fde == c.last {
		return c.rows, nil
	}
	c.last, c.rows, c.err = fde, c.rows[:0], nil
	c.it.Reset(frames, fde)
	for {
		row, err := c.it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			c.err = err
			break
		}
		c.rows = append(c.rows, c.convert(row, fde.CIE.RAColumn))
	}
	return c.rows, c.err
}

// convert normalizes one row. raCol is the CIE's return-address column.
func (c *cfiSide) convert(row *cfi.Row, raCol uint64) cfiRow {
	r := cfiRow{lo: row.PC, hi: row.End}
	if row.CFA.IsExpression() {
		v, err := evalExpr(row.CFA.Expr, c.order, false, c.regs.pc, 0, false)
		switch {
		case errors.Is(err, errPC):
			r.cfaExpr = row.CFA.Expr
		default:
			r.f.cfa = cfaFromValue(v, err, row.CFA.Expr)
		}
	} else if row.CFA.Reg == 0 && row.CFA.Offset == 0 {
		// No CFA rule yet (a CIE without def_cfa, ".cfi_startproc
		// simple"): cfi leaves the rule zero. Register 0 plus 0 is never
		// a real CFA.
		r.f.cfa = loc{kind: locUndefined}
	} else {
		r.f.cfa = loc{kind: locRule, regP: true, reg: row.CFA.Reg, off: row.CFA.Offset}
	}
	r.f.ra = c.ruleLoc(row.Rule(raCol))
	r.f.fp = c.ruleLoc(row.Rule(c.regs.fp))
	r.f.raMangled = row.RAMangled
	return r
}

// cfaAt evaluates a PC-dependent CFA expression at pc.
func (c *cfiSide) cfaAt(expr []byte, pc uint64) loc {
	v, err := evalExpr(expr, c.order, false, c.regs.pc, pc, true)
	return cfaFromValue(v, err, expr)
}

func cfaFromValue(v value, err error, expr []byte) loc {
	if err != nil {
		return loc{kind: locUnsupported, text: fmt.Sprintf("expression % x (%v)", expr, err)}
	}
	if !v.sym || v.cfa {
		return loc{kind: locUnsupported, text: fmt.Sprintf("expression % x (not register + offset)", expr)}
	}
	return loc{kind: locRule, regP: true, reg: v.reg, off: v.off, deref: v.deref}
}

// ruleLoc normalizes a register rule.
func (c *cfiSide) ruleLoc(r cfi.Rule) loc {
	switch r.Kind {
	case cfi.RuleUnset:
		return loc{kind: locSame, unset: true}
	case cfi.RuleSameValue:
		return loc{kind: locSame}
	case cfi.RuleUndefined:
		return loc{kind: locUndefined}
	case cfi.RuleOffset:
		return loc{kind: locRule, off: r.Offset, deref: true}
	case cfi.RuleValOffset:
		return loc{kind: locRule, off: r.Offset}
	case cfi.RuleRegister:
		return loc{kind: locRule, regP: true, reg: r.Reg}
	case cfi.RuleExpression, cfi.RuleValExpression:
		v, err := evalExpr(r.Expr, c.order, true, c.regs.pc, 0, false)
		if err != nil {
			return loc{kind: locUnsupported, text: fmt.Sprintf("%v % x (%v)", r.Kind, r.Expr, err)}
		}
		if !v.sym {
			return loc{kind: locUnsupported, text: fmt.Sprintf("%v % x (a constant)", r.Kind, r.Expr)}
		}
		l := loc{kind: locRule, regP: !v.cfa, reg: v.reg, off: v.off, deref: v.deref}
		if r.Kind == cfi.RuleExpression {
			if v.deref {
				return loc{kind: locUnsupported, text: fmt.Sprintf("%v % x (double dereference)", r.Kind, r.Expr)}
			}
			l.deref = true
		}
		return l
	}
	return loc{kind: locUnsupported, text: fmt.Sprintf("rule %v", r.Kind)}
}
