package cfi

import (
	"errors"
	"fmt"
	"io"
)

// RowIterator executes a CIE's initial instructions then an FDE's
// instructions and yields the rows one at a time, in PC order. Its storage
// (register rules, the remember_state stack) is reused from row to row and,
// through Reset, from FDE to FDE: after the first few FDEs, walking a
// section allocates nothing.
type RowIterator struct {
	frames *Frames
	fde    *FDE
	r      InstructionReader
	in     Instruction
	row    Row

	started, done, yielded bool
	err                    error
	pc                     uint64

	// The current state.
	cfa       CFARule
	regs      []RegisterRule
	raMangled bool
	argsSize  uint64

	// The state after the CIE's initial instructions, which DW_CFA_restore
	// returns to; cached for consecutive FDEs of one CIE.
	initCIE       *CIE
	initCFA       CFARule
	initRegs      []RegisterRule
	initRAMangled bool

	// The remember_state stack: one frame per push, whose registers are
	// stackRegs[lo:hi].
	stack     []savedState
	stackRegs []RegisterRule
}

type savedState struct {
	cfa       CFARule
	raMangled bool
	lo, hi    int
}

// Rows returns an iterator over the rows of fde.
func (f *Frames) Rows(fde *FDE) *RowIterator {
	it := &RowIterator{}
	it.Reset(f, fde)
	return it
}

// Reset makes it iterate over the rows of fde, keeping its storage.
func (it *RowIterator) Reset(f *Frames, fde *FDE) {
	it.frames, it.fde = f, fde
	it.started, it.done, it.yielded = false, false, false
	it.err = nil
	it.stack = it.stack[:0]
	it.stackRegs = it.stackRegs[:0]
}

// Next returns the next row, or io.EOF after the last one. The first row
// starts at fde.Start and reflects the CIE's initial instructions. A row is
// yielded for every advance that moves the location (zero advances do not
// end a row) and for the last stretch up to the FDE's end. The row and its
// Regs are valid until the following call. Errors are *EntryError naming
// the FDE's section offset; rows already returned stay valid.
func (it *RowIterator) Next() (*Row, error) {
	if it.done {
		return nil, io.EOF
	}
	if it.err != nil {
		return nil, it.err
	}
	if !it.started {
		if err := it.start(); err != nil {
			return nil, it.fail(err)
		}
	}
	for {
		err := it.r.next(&it.in)
		if err != nil {
			if err == io.EOF {
				return it.last()
			}
			return nil, it.fail(err)
		}
		in := &it.in
		switch in.Op {
		case OpAdvanceLoc, OpAdvanceLoc1, OpAdvanceLoc2, OpAdvanceLoc4:
			if in.Delta == 0 {
				continue
			}
			next := it.pc + in.Delta
			if next < it.pc {
				return nil, it.fail(it.instrErr("%v: location wraps around", in.Op))
			}
			return it.emit(next), nil
		case OpSetLoc:
			if in.Delta < it.pc {
				return nil, it.fail(it.instrErr("DW_CFA_set_loc to %#x, before the current location %#x", in.Delta, it.pc))
			}
			if in.Delta == it.pc {
				continue
			}
			return it.emit(in.Delta), nil
		}
		if err := it.execute(in); err != nil {
			return nil, it.fail(err)
		}
	}
}

// start runs the CIE's initial instructions (or takes their cached result)
// and positions the reader on the FDE's instructions.
func (it *RowIterator) start() error {
	it.started = true
	f, fde := it.frames, it.fde
	cie := fde.CIE
	if cie == nil {
		return errors.New("FDE without a CIE")
	}
	if it.initCIE != cie {
		it.initCIE = nil
		it.cfa = CFARule{}
		it.regs = it.regs[:0]
		it.raMangled = false
		it.initRegs = it.initRegs[:0]
		it.r.reset(cie.Initial, cie.InitialOffset, cie, f.Order, &f.ptr)
		for {
			err := it.r.next(&it.in)
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("CIE at offset %#x: %w", cie.Offset, err)
			}
			switch it.in.Op {
			case OpAdvanceLoc, OpAdvanceLoc1, OpAdvanceLoc2, OpAdvanceLoc4, OpSetLoc:
				return fmt.Errorf("CIE at offset %#x: %v in the initial instructions", cie.Offset, it.in.Op)
			}
			if err := it.execute(&it.in); err != nil {
				return fmt.Errorf("CIE at offset %#x: %w", cie.Offset, err)
			}
		}
		it.initCFA = it.cfa
		it.initRegs = append(it.initRegs, it.regs...)
		it.initRAMangled = it.raMangled
		// A CIE that leaves state on the stack is run again for every FDE.
		if len(it.stack) == 0 {
			it.initCIE = cie
		}
	} else {
		it.cfa = it.initCFA
		it.regs = append(it.regs[:0], it.initRegs...)
		it.raMangled = it.initRAMangled
	}
	it.argsSize = 0
	ptr := &f.ptr
	if ptr.FuncAddr != fde.Start {
		// set_loc with DW_EH_PE_funcrel needs the function's start.
		p := *ptr
		p.FuncAddr = fde.Start
		ptr = &p
	}
	it.r.reset(fde.Instructions, fde.InstructionsOffset, cie, f.Order, ptr)
	it.pc = fde.Start
	return nil
}

// emit returns the current state as the row [it.pc, end) and moves to end.
func (it *RowIterator) emit(end uint64) *Row {
	it.row = Row{
		PC:        it.pc,
		End:       end,
		CFA:       it.cfa,
		Regs:      it.regs,
		RAMangled: it.raMangled,
		ArgsSize:  it.argsSize,
	}
	it.pc = end
	it.yielded = true
	return &it.row
}

// last returns the final row, which runs to the FDE's end; it is left out
// when earlier rows already reached the end.
func (it *RowIterator) last() (*Row, error) {
	it.done = true
	end := it.fde.End()
	if it.yielded && it.pc >= end {
		return nil, io.EOF
	}
	if end < it.pc {
		end = it.pc
	}
	return it.emit(end), nil
}

func (it *RowIterator) fail(err error) error {
	it.err = &EntryError{Section: it.frames.Name, Offset: it.fde.Offset, Err: err}
	return it.err
}

func (it *RowIterator) instrErr(format string, args ...any) error {
	start := it.r.Offset() - uint64(len(it.in.Raw))
	return fmt.Errorf("instruction at offset %#x: %s", start, fmt.Sprintf(format, args...))
}

// execute applies one instruction that does not move the location.
func (it *RowIterator) execute(in *Instruction) error {
	switch in.Op {
	case OpNop:
	case OpOffset, OpOffsetExtended, OpOffsetExtendedSF, OpGNUNegativeOffsetExtended:
		it.set(in.Reg, Rule{Kind: RuleOffset, Offset: in.Offset})
	case OpValOffset, OpValOffsetSF:
		it.set(in.Reg, Rule{Kind: RuleValOffset, Offset: in.Offset})
	case OpRestore, OpRestoreExtended:
		it.restore(in.Reg)
	case OpUndefined:
		it.set(in.Reg, Rule{Kind: RuleUndefined})
	case OpSameValue:
		it.set(in.Reg, Rule{Kind: RuleSameValue})
	case OpRegister:
		it.set(in.Reg, Rule{Kind: RuleRegister, Reg: in.Reg2})
	case OpExpression:
		it.set(in.Reg, Rule{Kind: RuleExpression, Expr: in.Expr})
	case OpValExpression:
		it.set(in.Reg, Rule{Kind: RuleValExpression, Expr: in.Expr})
	case OpRememberState:
		lo := len(it.stackRegs)
		it.stackRegs = append(it.stackRegs, it.regs...)
		it.stack = append(it.stack, savedState{cfa: it.cfa, raMangled: it.raMangled, lo: lo, hi: len(it.stackRegs)})
	case OpRestoreState:
		n := len(it.stack)
		if n == 0 {
			return it.instrErr("DW_CFA_restore_state with no remembered state")
		}
		s := it.stack[n-1]
		it.stack = it.stack[:n-1]
		it.cfa, it.raMangled = s.cfa, s.raMangled
		it.regs = append(it.regs[:0], it.stackRegs[s.lo:s.hi]...)
		it.stackRegs = it.stackRegs[:s.lo]
	case OpDefCFA, OpDefCFASF:
		it.cfa = CFARule{Reg: in.Reg, Offset: in.Offset}
	case OpDefCFARegister:
		// Keeps the offset; an expression CFA becomes register-based.
		it.cfa.Reg, it.cfa.Expr = in.Reg, nil
	case OpDefCFAOffset, OpDefCFAOffsetSF:
		it.cfa.Offset = in.Offset
	case OpDefCFAExpression:
		it.cfa = CFARule{Expr: in.Expr}
	case OpGNUArgsSize:
		it.argsSize = uint64(in.Offset)
	case OpGNUWindowSave, OpAArch64NegateRAStateWithPC:
		it.raMangled = !it.raMangled
	default:
		return it.instrErr("%v not allowed here", in.Op)
	}
	return nil
}

// set gives register col the rule r, keeping it.regs sorted.
func (it *RowIterator) set(col uint64, r Rule) {
	regs := it.regs
	i := 0
	for i < len(regs) && regs[i].Column < col {
		i++
	}
	if i < len(regs) && regs[i].Column == col {
		regs[i].Rule = r
		return
	}
	regs = append(regs, RegisterRule{})
	copy(regs[i+1:], regs[i:])
	regs[i] = RegisterRule{Column: col, Rule: r}
	it.regs = regs
}

// restore gives register col its rule after the CIE's initial
// instructions, or none.
func (it *RowIterator) restore(col uint64) {
	for _, r := range it.initRegs {
		if r.Column == col {
			it.set(col, r.Rule)
			return
		}
	}
	for i, r := range it.regs {
		if r.Column == col {
			it.regs = append(it.regs[:i], it.regs[i+1:]...)
			return
		}
	}
}
