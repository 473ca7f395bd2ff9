package unwind

import "fmt"

// Reason says why a walk ended.
type Reason uint8

// Reasons a walk ends. EndOutermost and EndZeroRA are the normal ends of a
// complete stack; the others say where SFrame or the stack could not take
// the walk further.
const (
	// EndOutermost: the FRE of the last frame has no data words: the
	// return address is undefined (_start, a thread's start routine).
	EndOutermost Reason = iota
	// EndZeroRA: the return address recovered is 0.
	EndZeroRA
	// EndNoModule: the PC is in no mapped module.
	EndNoModule
	// EndNoSFrame: the PC's module has no .sframe section.
	EndNoSFrame
	// EndNoFRE: the module's .sframe has no FRE for the PC (no FDE
	// covers it, or the PC is before its function's first FRE).
	EndNoFRE
	// EndMemory: a word the rules point at cannot be read.
	EndMemory
	// EndRegister: a rule uses a register whose value this frame does not
	// know (any register but the stack and frame pointers, outside the
	// innermost frame and the frames signals interrupted).
	EndRegister
	// EndRAInRegister: the FRE says the return address is still in its
	// register, in a frame where that register is not known.
	EndRAInRegister
	// EndStackOrder: the caller's stack pointer is below this frame's, or
	// the caller's frame is this one again.
	EndStackOrder
	// EndMaxFrames: Walker.MaxFrames frames were walked.
	EndMaxFrames
)

var reasonText = [...]string{
	EndOutermost:    "outermost frame",
	EndZeroRA:       "return address is 0",
	EndNoModule:     "PC in no mapped module",
	EndNoSFrame:     "module has no .sframe",
	EndNoFRE:        "no SFrame FRE covers the PC",
	EndMemory:       "memory not readable",
	EndRegister:     "rule needs a register this frame does not know",
	EndRAInRegister: "return address in a register this frame does not know",
	EndStackOrder:   "stack pointer does not move to the caller",
	EndMaxFrames:    "frame limit reached",
}

// String returns a short description of r.
func (r Reason) String() string {
	if int(r) < len(reasonText) {
		return reasonText[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Complete reports whether r is a normal end of a whole stack.
func (r Reason) Complete() bool { return r == EndOutermost || r == EndZeroRA }

// End is how a walk ended: the reason, the PC of the last frame, and the
// address that could not be read (EndMemory) or the register that was not
// known (EndRegister, EndRAInRegister).
type End struct {
	Reason Reason
	PC     uint64
	Addr   uint64
	Reg    uint32
}

// String describes e in one line.
func (e End) String() string {
	switch e.Reason {
	case EndMemory:
		return fmt.Sprintf("%v at %#x (PC %#x)", e.Reason, e.Addr, e.PC)
	case EndRegister, EndRAInRegister:
		return fmt.Sprintf("%v: DWARF register %d (PC %#x)", e.Reason, e.Reg, e.PC)
	}
	return fmt.Sprintf("%v (PC %#x)", e.Reason, e.PC)
}
