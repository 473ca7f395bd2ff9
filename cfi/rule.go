package cfi

// RuleKind is the kind of a register rule in a row.
type RuleKind uint8

// Register rule kinds (DWARF 5 section 6.4.1).
const (
	// RuleUnset: the CFI never gave the register a rule (or restored it to
	// a CIE that gives it none). Rows do not list such registers.
	RuleUnset RuleKind = iota
	RuleUndefined
	RuleSameValue
	RuleOffset        // saved at CFA+Offset
	RuleValOffset     // the value is CFA+Offset
	RuleRegister      // saved in register Reg
	RuleExpression    // saved at the address Expr computes
	RuleValExpression // the value is what Expr computes
)

var ruleNames = [...]string{
	RuleUnset:         "unset",
	RuleUndefined:     "undefined",
	RuleSameValue:     "same_value",
	RuleOffset:        "offset",
	RuleValOffset:     "val_offset",
	RuleRegister:      "register",
	RuleExpression:    "expression",
	RuleValExpression: "val_expression",
}

// String returns the rule kind's name as the rows JSON prints it, such as
// "offset" or "same_value".
func (k RuleKind) String() string { return enumName(ruleNames[:], int(k), "RuleKind(%d)") }

// Rule is how to recover one register's value in the caller's frame.
type Rule struct {
	Kind   RuleKind
	Reg    uint64 // RuleRegister: the register holding the value
	Offset int64  // RuleOffset, RuleValOffset: the offset from the CFA in bytes
	Expr   []byte // RuleExpression, RuleValExpression: the DWARF expression (aliases the section data)
}

// RegisterRule is the rule of one register (a DWARF register number, which
// the spec calls a column).
type RegisterRule struct {
	Column uint64
	Rule   Rule
}

// CFARule is how to compute the canonical frame address: Reg + Offset, or
// the DWARF expression Expr when Expr is not nil.
type CFARule struct {
	Expr   []byte
	Reg    uint64
	Offset int64
}

// IsExpression reports whether the CFA is given by a DWARF expression.
func (c CFARule) IsExpression() bool { return c.Expr != nil }

// Row is one line of the table a CIE and FDE describe: the rules that hold
// for PC in [PC, End).
type Row struct {
	PC  uint64
	End uint64
	CFA CFARule
	// Regs are the registers with a rule, sorted by Column. The slice
	// aliases the iterator's storage: it is valid until the next call of
	// RowIterator.Next.
	Regs []RegisterRule
	// RAMangled is the AArch64 return-address signing state: true after an
	// odd number of DW_CFA_AARCH64_negate_ra_state (0x2d) or
	// negate_ra_state_with_pc (0x2c) instructions. Meaningless on targets
	// where 0x2d is DW_CFA_GNU_window_save.
	RAMangled bool
	// ArgsSize is the last DW_CFA_GNU_args_size operand, 0 if none.
	ArgsSize uint64
}

// Rule returns the rule of register col; Kind is RuleUnset when the row has
// none.
func (r *Row) Rule(col uint64) Rule {
	for i := range r.Regs {
		if r.Regs[i].Column == col {
			return r.Regs[i].Rule
		}
	}
	return Rule{}
}
