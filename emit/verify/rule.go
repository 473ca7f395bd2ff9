package verify

import (
	"fmt"

	"github.com/sframe-gen/sframe-gen/emit"
)

// locKind is how a tracked value (CFA, RA or FP of the caller) is found.
type locKind uint8

const (
	// locSame: the value is unchanged (no rule, DW_CFA_same_value; SFrame
	// has no data word for it).
	locSame locKind = iota
	// locUndefined: the value cannot be recovered (RA undefined marks the
	// outermost frame).
	locUndefined
	// locRule: value = [*](base + off), base the CFA or a register.
	locRule
	// locUnsupported: a rule neither side can state in SFrame terms (a
	// DWARF expression of another shape); text says what it is.
	locUnsupported
)

// loc is one normalized recovery rule.
type loc struct {
	kind  locKind
	regP  bool   // base is register reg; else the CFA
	reg   uint64 // DWARF register number of the base
	off   int64
	deref bool // value = *(base + off); else base + off
	text  string
	// unset: for locSame from the CFI, the register has no rule at all
	// (rather than DW_CFA_same_value).
	unset bool
}

func (l loc) equal(m loc) bool {
	if l.kind != m.kind {
		return false
	}
	switch l.kind {
	case locRule:
		return l.regP == m.regP && l.off == m.off && l.deref == m.deref && (!l.regP || l.reg == m.reg)
	case locUnsupported:
		return false
	}
	return true
}

// format renders the rule with the ABI's register names ("sp", "fp", "r10").
func (l loc) format(abi emit.ABI) string {
	switch l.kind {
	case locSame:
		return "unchanged (no rule)"
	case locUndefined:
		return "undefined"
	case locUnsupported:
		return l.text
	}
	base := "CFA"
	if l.regP {
		base = regName(abi, l.reg)
	}
	s := base
	if l.off != 0 || !l.regP {
		s = fmt.Sprintf("%s%+d", base, l.off)
	}
	if l.deref {
		return "*(" + s + ")"
	}
	return s
}

// formatCFA renders a CFA rule, its offset always shown ("sp+0").
func (l loc) formatCFA(abi emit.ABI) string {
	if l.kind != locRule || !l.regP {
		return l.format(abi)
	}
	s := fmt.Sprintf("%s%+d", regName(abi, l.reg), l.off)
	if l.deref {
		return "*(" + s + ")"
	}
	return s
}

func regName(abi emit.ABI, reg uint64) string {
	if reg > 1<<32-1 {
		return fmt.Sprintf("r%d", reg)
	}
	return emit.RegName(abi, uint32(reg))
}

// frame is what one side says for a range of addresses: how to find the
// caller's CFA, return address and frame pointer, and whether the return
// address is signed (AArch64).
type frame struct {
	cfa       loc // always a register rule (regP) or unsupported
	ra, fp    loc
	raMangled bool
}

// abiRegs are the DWARF numbers of the registers SFrame tracks.
type abiRegs struct {
	sp, fp, ra uint64
	pc         int64 // register an expression reads the PC from; -1 if none
}

func regsFor(abi emit.ABI) abiRegs {
	switch abi {
	case emit.ABIAMD64LittleEndian:
		return abiRegs{sp: 7, fp: 6, ra: 16, pc: 16}
	case emit.ABIS390XBigEndian:
		return abiRegs{sp: 15, fp: 11, ra: 14, pc: -1}
	}
	return abiRegs{sp: 31, fp: 29, ra: 30, pc: -1}
}
