package cfi

import "fmt"

// Op is a DW_CFA call-frame instruction opcode. The three forms that keep an
// operand in the low 6 bits of the opcode byte are normalized to their primary
// codes: OpAdvanceLoc = 0x40, OpOffset = 0x80, OpRestore = 0xc0.
type Op uint8

// DW_CFA opcodes of DWARF 5 and the GNU and AArch64 extensions.
const (
	OpNop                        Op = 0x00
	OpSetLoc                     Op = 0x01
	OpAdvanceLoc1                Op = 0x02
	OpAdvanceLoc2                Op = 0x03
	OpAdvanceLoc4                Op = 0x04
	OpOffsetExtended             Op = 0x05
	OpRestoreExtended            Op = 0x06
	OpUndefined                  Op = 0x07
	OpSameValue                  Op = 0x08
	OpRegister                   Op = 0x09
	OpRememberState              Op = 0x0a
	OpRestoreState               Op = 0x0b
	OpDefCFA                     Op = 0x0c
	OpDefCFARegister             Op = 0x0d
	OpDefCFAOffset               Op = 0x0e
	OpDefCFAExpression           Op = 0x0f
	OpExpression                 Op = 0x10
	OpOffsetExtendedSF           Op = 0x11
	OpDefCFASF                   Op = 0x12
	OpDefCFAOffsetSF             Op = 0x13
	OpValOffset                  Op = 0x14
	OpValOffsetSF                Op = 0x15
	OpValExpression              Op = 0x16
	OpAArch64NegateRAStateWithPC Op = 0x2c
	// OpGNUWindowSave is DW_CFA_GNU_window_save on SPARC and
	// DW_CFA_AARCH64_negate_ra_state on AArch64 (the same code).
	OpGNUWindowSave             Op = 0x2d
	OpGNUArgsSize               Op = 0x2e
	OpGNUNegativeOffsetExtended Op = 0x2f
	OpAdvanceLoc                Op = 0x40
	OpOffset                    Op = 0x80
	OpRestore                   Op = 0xc0
)

// OpAArch64NegateRAState is DW_CFA_AARCH64_negate_ra_state, the AArch64 name
// of OpGNUWindowSave.
const OpAArch64NegateRAState = OpGNUWindowSave

var opNames = [...]string{
	OpNop:                        "DW_CFA_nop",
	OpSetLoc:                     "DW_CFA_set_loc",
	OpAdvanceLoc1:                "DW_CFA_advance_loc1",
	OpAdvanceLoc2:                "DW_CFA_advance_loc2",
	OpAdvanceLoc4:                "DW_CFA_advance_loc4",
	OpOffsetExtended:             "DW_CFA_offset_extended",
	OpRestoreExtended:            "DW_CFA_restore_extended",
	OpUndefined:                  "DW_CFA_undefined",
	OpSameValue:                  "DW_CFA_same_value",
	OpRegister:                   "DW_CFA_register",
	OpRememberState:              "DW_CFA_remember_state",
	OpRestoreState:               "DW_CFA_restore_state",
	OpDefCFA:                     "DW_CFA_def_cfa",
	OpDefCFARegister:             "DW_CFA_def_cfa_register",
	OpDefCFAOffset:               "DW_CFA_def_cfa_offset",
	OpDefCFAExpression:           "DW_CFA_def_cfa_expression",
	OpExpression:                 "DW_CFA_expression",
	OpOffsetExtendedSF:           "DW_CFA_offset_extended_sf",
	OpDefCFASF:                   "DW_CFA_def_cfa_sf",
	OpDefCFAOffsetSF:             "DW_CFA_def_cfa_offset_sf",
	OpValOffset:                  "DW_CFA_val_offset",
	OpValOffsetSF:                "DW_CFA_val_offset_sf",
	OpValExpression:              "DW_CFA_val_expression",
	OpAArch64NegateRAStateWithPC: "DW_CFA_AARCH64_negate_ra_state_with_pc",
	OpGNUWindowSave:              "DW_CFA_GNU_window_save",
	OpGNUArgsSize:                "DW_CFA_GNU_args_size",
	OpGNUNegativeOffsetExtended:  "DW_CFA_GNU_negative_offset_extended",
	OpAdvanceLoc:                 "DW_CFA_advance_loc",
	OpOffset:                     "DW_CFA_offset",
	OpRestore:                    "DW_CFA_restore",
}

// String returns the DWARF name of op, such as "DW_CFA_def_cfa". Opcode 0x2d
// prints as DW_CFA_GNU_window_save (it is DW_CFA_AARCH64_negate_ra_state on
// AArch64).
func (op Op) String() string { return enumName(opNames[:], int(op), "DW_CFA_0x%02x") }

// enumName returns the name of value v of an enumeration in names, or v
// formatted with fallback when it has none.
func enumName(names []string, v int, fallback string) string {
	if v >= 0 && v < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf(fallback, v)
}
