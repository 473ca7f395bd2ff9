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
	tooMany                bool // a limit was hit
	slow                   bool // tests: decode everything through InstructionReader
	err                    error
	pc                     uint64

	// The current state is it.row's CFA, Regs, RAMangled and ArgsSize.

	// The state after the CIE's initial instructions, which DW_CFA_restore
	// returns to, cached per CIE of cacheFrames.
	initCIE     *CIE
	init        *cieState
	cieCache    map[*CIE]*cieState
	cacheFrames *Frames

	// The remember_state stack: one frame per push, whose registers are
	// stackRegs[lo:hi].
	stack     []savedState
	stackRegs []RegisterRule
}

// Limits that keep hostile input from costing time or memory quadratic in
// its size; real CFI stays far below them.
const (
	maxRegisters = 1024 // registers with a rule in one row
	maxStack     = 1024 // remember_state depth
)

// cieState is the state after a CIE's initial instructions.
type cieState struct {
	cfa       CFARule
	regs      []RegisterRule
	raMangled bool
	stack     []savedState
	stackRegs []RegisterRule
	err       error
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
	it.started, it.done, it.yielded, it.tooMany = false, false, false, false
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
		if !it.slow {
			row, ok := it.fast()
			if it.tooMany {
				return nil, it.fail(it.limitErr())
			}
			if ok {
				return row, nil
			}
		}
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
		if it.tooMany {
			return nil, it.fail(it.limitErr())
		}
	}
}

func (it *RowIterator) limitErr() error {
	return fmt.Errorf("instruction before offset %#x: more than %d registers with rules or %d remembered states", it.r.Offset(), maxRegisters, maxStack)
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
	if it.initCIE != cie || it.init == nil {
		if it.cacheFrames != f || it.cieCache == nil {
			it.cieCache = map[*CIE]*cieState{}
			it.cacheFrames = f
		}
		st := it.cieCache[cie]
		if st == nil {
			st = it.runCIE(cie)
			it.cieCache[cie] = st
		}
		it.init, it.initCIE = st, cie
	}
	st := it.init
	if st.err != nil {
		return st.err
	}
	it.row.CFA = st.cfa
	regs := it.row.Regs[:0]
	if cap(regs) < len(st.regs) {
		regs = make([]RegisterRule, 0, len(st.regs)+8)
	}
	regs = regs[:len(st.regs)]
	for i := range st.regs {
		moveRule(&regs[i], &st.regs[i])
	}
	it.row.Regs = regs
	it.row.RAMangled = st.raMangled
	it.row.ArgsSize = 0
	if len(st.stack) > 0 {
		it.stack = append(it.stack[:0], st.stack...)
		it.stackRegs = append(it.stackRegs[:0], st.stackRegs...)
	}
	it.r.reset(fde.Instructions, fde.InstructionsOffset, cie, f.Order, f.big, &f.ptr, fde.Start)
	it.pc = fde.Start
	return nil
}

// runCIE executes cie's initial instructions and returns the resulting
// state (or error), which start caches per CIE: every FDE of a CIE begins
// from it, and DW_CFA_restore returns to its rules.
func (it *RowIterator) runCIE(cie *CIE) *cieState {
	f := it.frames
	it.row.CFA = CFARule{}
	it.row.Regs = it.row.Regs[:0]
	it.row.RAMangled = false
	it.stack, it.stackRegs = it.stack[:0], it.stackRegs[:0]
	it.init = &cieState{} // restore in the initial instructions: no rule
	fail := func(err error) *cieState {
		return &cieState{err: fmt.Errorf("CIE at offset %#x: %w", cie.Offset, err)}
	}
	it.r.reset(cie.Initial, cie.InitialOffset, cie, f.Order, f.big, &f.ptr, 0)
	for {
		err := it.r.next(&it.in)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		switch it.in.Op {
		case OpAdvanceLoc, OpAdvanceLoc1, OpAdvanceLoc2, OpAdvanceLoc4, OpSetLoc:
			return fail(fmt.Errorf("%v in the initial instructions", it.in.Op))
		}
		if err := it.execute(&it.in); err != nil {
			return fail(err)
		}
		if it.tooMany {
			return fail(it.limitErr())
		}
	}
	return &cieState{
		cfa:       it.row.CFA,
		regs:      append([]RegisterRule(nil), it.row.Regs...),
		raMangled: it.row.RAMangled,
		stack:     append([]savedState(nil), it.stack...),
		stackRegs: append([]RegisterRule(nil), it.stackRegs...),
	}
}

// emit returns the current state as the row [it.pc, end) and moves to end.
func (it *RowIterator) emit(end uint64) *Row {
	it.row.PC, it.row.End = it.pc, end
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
		it.remember()
	case OpRestoreState:
		if len(it.stack) == 0 {
			return it.instrErr("DW_CFA_restore_state with no remembered state")
		}
		it.restoreState()
	case OpDefCFA, OpDefCFASF:
		it.row.CFA = CFARule{Reg: in.Reg, Offset: in.Offset}
	case OpDefCFARegister:
		// Keeps the offset; an expression CFA becomes register-based.
		it.row.CFA.Reg, it.row.CFA.Expr = in.Reg, nil
	case OpDefCFAOffset, OpDefCFAOffsetSF:
		it.row.CFA.Offset = in.Offset
	case OpDefCFAExpression:
		it.row.CFA = CFARule{Expr: in.Expr}
	case OpGNUArgsSize:
		it.row.ArgsSize = uint64(in.Offset)
	case OpGNUWindowSave, OpAArch64NegateRAStateWithPC:
		it.row.RAMangled = !it.row.RAMangled
	default:
		return it.instrErr("%v not allowed here", in.Op)
	}
	return nil
}
