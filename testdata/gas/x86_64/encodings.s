# encodings: CFI operand encodings gas picks in .eh_frame (see .frames-raw):
# DW_CFA_advance_loc / advance_loc1 / advance_loc2, DW_CFA_offset_extended_sf
# (positive offset: FP at c+8), DW_CFA_offset_extended (register > 63),
# DW_CFA_restore_extended (register > 63), DW_CFA_def_cfa_sf and
# DW_CFA_def_cfa_offset_sf (negative offsets), DW_CFA_val_offset(_sf),
# DW_CFA_register, DW_CFA_same_value, DW_CFA_undefined of a callee-saved GPR.
	.text
	.globl	enc
	.type	enc, @function
enc:
	.cfi_startproc
	nop
	.cfi_offset 6, 8
	.skip	100, 0x90
	.cfi_offset 70, -16
	.skip	300, 0x90
	.cfi_restore 70
	nop
	.cfi_def_cfa 7, -16
	nop
	.cfi_def_cfa_offset -24
	nop
	.cfi_def_cfa 7, 8
	.cfi_val_offset 12, -32
	nop
	.cfi_val_offset 13, 16
	nop
	.cfi_register 3, 12
	nop
	.cfi_same_value 3
	.cfi_undefined 14
	nop
	.cfi_restore 6
	ret
	.cfi_endproc
	.size	enc, .-enc
