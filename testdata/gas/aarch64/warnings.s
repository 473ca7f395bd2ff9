# warnings: one function per aarch64 "no SFrame FDE emitted" reason that is
# reachable on this ABI, in order (gas prints no line numbers: the order of the
# .gs.warnings lines follows the w_* functions). ok_* functions are kept.
	.text

# w_def_cfa_reg: non-SP/FP register in .cfi_def_cfa (no flex FDEs on aarch64)
	.type	w_def_cfa_reg, %function
w_def_cfa_reg:
	.cfi_startproc
	nop
	.cfi_def_cfa 9, 16
	ret
	.cfi_endproc
	.size	w_def_cfa_reg, .-w_def_cfa_reg

# w_def_cfa_register: non-SP/FP register in .cfi_def_cfa_register
	.type	w_def_cfa_register, %function
w_def_cfa_register:
	.cfi_startproc
	nop
	.cfi_def_cfa_register 19
	ret
	.cfi_endproc
	.size	w_def_cfa_register, .-w_def_cfa_register

# w_def_cfa_big: .cfi_def_cfa offset beyond int32
	.type	w_def_cfa_big, %function
w_def_cfa_big:
	.cfi_startproc
	nop
	.cfi_def_cfa 31, 0x100000000
	ret
	.cfi_endproc
	.size	w_def_cfa_big, .-w_def_cfa_big

# w_def_cfa_offset_big: .cfi_def_cfa_offset beyond int32
	.type	w_def_cfa_offset_big, %function
w_def_cfa_offset_big:
	.cfi_startproc
	nop
	.cfi_def_cfa_offset 0x100000000
	ret
	.cfi_endproc
	.size	w_def_cfa_offset_big, .-w_def_cfa_offset_big

# w_val_offset_fp: .cfi_val_offset x29
	.type	w_val_offset_fp, %function
w_val_offset_fp:
	.cfi_startproc
	nop
	.cfi_val_offset 29, -16
	ret
	.cfi_endproc
	.size	w_val_offset_fp, .-w_val_offset_fp

# w_val_offset_ra: .cfi_val_offset x30 (RA tracked)
	.type	w_val_offset_ra, %function
w_val_offset_ra:
	.cfi_startproc
	nop
	.cfi_val_offset 30, -8
	ret
	.cfi_endproc
	.size	w_val_offset_ra, .-w_val_offset_ra

# w_val_offset_sp: .cfi_val_offset sp, non-zero
	.type	w_val_offset_sp, %function
w_val_offset_sp:
	.cfi_startproc
	nop
	.cfi_val_offset 31, 16
	ret
	.cfi_endproc
	.size	w_val_offset_sp, .-w_val_offset_sp

# ok_val_offset_sp0: kept: sp,0
	.type	ok_val_offset_sp0, %function
ok_val_offset_sp0:
	.cfi_startproc
	nop
	.cfi_val_offset 31, 0
	ret
	.cfi_endproc
	.size	ok_val_offset_sp0, .-ok_val_offset_sp0

# w_register_ra: .cfi_register x30 (no flex on aarch64)
	.type	w_register_ra, %function
w_register_ra:
	.cfi_startproc
	nop
	.cfi_register 30, 9
	ret
	.cfi_endproc
	.size	w_register_ra, .-w_register_ra

# w_register_fp: .cfi_register x29
	.type	w_register_fp, %function
w_register_fp:
	.cfi_startproc
	nop
	.cfi_register 29, 9
	ret
	.cfi_endproc
	.size	w_register_fp, .-w_register_fp

# w_register_sp: .cfi_register sp
	.type	w_register_sp, %function
w_register_sp:
	.cfi_startproc
	nop
	.cfi_register 31, 9
	ret
	.cfi_endproc
	.size	w_register_sp, .-w_register_sp

# ok_register_other: kept: .cfi_register of another register is ignored
	.type	ok_register_other, %function
ok_register_other:
	.cfi_startproc
	nop
	.cfi_register 19, 9
	ret
	.cfi_endproc
	.size	ok_register_other, .-ok_register_other

# w_fp_without_ra: FP saved on the stack, RA not
	.type	w_fp_without_ra, %function
w_fp_without_ra:
	.cfi_startproc
	nop
	str x29, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	ret
	.cfi_endproc
	.size	w_fp_without_ra, .-w_fp_without_ra

# w_negate_ra_with_pc: PAuth_LR (DW_CFA_AARCH64_negate_ra_state_with_pc)
	.type	w_negate_ra_with_pc, %function
w_negate_ra_with_pc:
	.cfi_startproc
	nop
	.cfi_negate_ra_state_with_pc
	ret
	.cfi_endproc
	.size	w_negate_ra_with_pc, .-w_negate_ra_with_pc

# w_esc_expr_ra: DW_CFA_expression x30 (RA tracked)
	.type	w_esc_expr_ra, %function
w_esc_expr_ra:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x1e, 0x02, 0x8f, 0x08
	ret
	.cfi_endproc
	.size	w_esc_expr_ra, .-w_esc_expr_ra

# w_esc_expr_sp: DW_CFA_expression sp
	.type	w_esc_expr_sp, %function
w_esc_expr_sp:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x1f, 0x02, 0x8f, 0x08
	ret
	.cfi_endproc
	.size	w_esc_expr_sp, .-w_esc_expr_sp

# esc_expr_fp: DW_CFA_expression x29: gas 2.46.0 emitted a bogus flex FDE here
	.type	esc_expr_fp, %function
esc_expr_fp:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x1d, 0x02, 0x8f, 0x10
	ret
	.cfi_endproc
	.size	esc_expr_fp, .-esc_expr_fp

# w_esc_def_cfa_expr: DW_CFA_def_cfa_expression (x86-64 only)
	.type	w_esc_def_cfa_expr, %function
w_esc_def_cfa_expr:
	.cfi_startproc
	nop
	.cfi_escape 0x0f, 0x03, 0x8f, 0x08, 0x06
	ret
	.cfi_endproc
	.size	w_esc_def_cfa_expr, .-w_esc_def_cfa_expr

# w_esc_args_size: DW_CFA_GNU_args_size with the CFA on sp
	.type	w_esc_args_size, %function
w_esc_args_size:
	.cfi_startproc
	nop
	sub sp, sp, 16
	.cfi_def_cfa_offset 16
	.cfi_escape 0x2e, 0x10
	ret
	.cfi_endproc
	.size	w_esc_args_size, .-w_esc_args_size

# w_undefined_fp: .cfi_undefined x29
	.type	w_undefined_fp, %function
w_undefined_fp:
	.cfi_startproc
	nop
	.cfi_undefined 29
	ret
	.cfi_endproc
	.size	w_undefined_fp, .-w_undefined_fp

# w_undefined_sp: .cfi_undefined sp
	.type	w_undefined_sp, %function
w_undefined_sp:
	.cfi_startproc
	nop
	.cfi_undefined 31
	ret
	.cfi_endproc
	.size	w_undefined_sp, .-w_undefined_sp

# w_val_encoded_addr: .cfi_val_encoded_addr
	.type	w_val_encoded_addr, %function
w_val_encoded_addr:
	.cfi_startproc
	nop
	.cfi_val_encoded_addr 19, 0x1b, w_val_encoded_addr
	ret
	.cfi_endproc
	.size	w_val_encoded_addr, .-w_val_encoded_addr

# w_label: .cfi_label
	.type	w_label, %function
w_label:
	.cfi_startproc
	nop
	.cfi_label .Lw_label
	ret
	.cfi_endproc
	.size	w_label, .-w_label

# w_remember_simple: .cfi_startproc simple + .cfi_remember_state
	.type	w_remember_simple, %function
w_remember_simple:
	.cfi_startproc simple
	.cfi_remember_state
	nop
	.cfi_def_cfa 31, 0
	ret
	.cfi_endproc
	.size	w_remember_simple, .-w_remember_simple
