# warnings: one function per x86-64 "no SFrame FDE emitted" reason that is
# reachable on this ABI, in order (gas prints no line numbers, so the order of
# the .gs.warnings lines matches the order of the w_* functions). Functions named
# ok_* are near-misses that gas keeps. Each function: one instruction, the CFI
# under test, one more instruction.
	.text

# w_def_cfa_big: gcc never; .cfi_def_cfa offset beyond int32
	.type	w_def_cfa_big, @function
w_def_cfa_big:
	.cfi_startproc
	nop
	.cfi_def_cfa 7, 0x100000000
	ret
	.cfi_endproc
	.size	w_def_cfa_big, .-w_def_cfa_big

# w_def_cfa_offset_big: .cfi_def_cfa_offset beyond int32
	.type	w_def_cfa_offset_big, @function
w_def_cfa_offset_big:
	.cfi_startproc
	nop
	.cfi_def_cfa_offset 0x100000000
	ret
	.cfi_endproc
	.size	w_def_cfa_offset_big, .-w_def_cfa_offset_big

# ok_def_cfa_offset_r10: kept by gas 2.47.50 (flex r10+16); gas 2.46.0 warned
# ".cfi_def_cfa_offset without CFA base register in effect" here
	.type	ok_def_cfa_offset_r10, @function
ok_def_cfa_offset_r10:
	.cfi_startproc
	nop
	.cfi_def_cfa 10, 0
	nop
	.cfi_def_cfa_offset 16
	ret
	.cfi_endproc
	.size	ok_def_cfa_offset_r10, .-ok_def_cfa_offset_r10

# w_val_offset_fp: .cfi_val_offset rbp
	.type	w_val_offset_fp, @function
w_val_offset_fp:
	.cfi_startproc
	nop
	.cfi_val_offset 6, -16
	ret
	.cfi_endproc
	.size	w_val_offset_fp, .-w_val_offset_fp

# w_val_offset_sp: .cfi_val_offset rsp with a non-zero offset
	.type	w_val_offset_sp, @function
w_val_offset_sp:
	.cfi_startproc
	nop
	.cfi_val_offset 7, 8
	ret
	.cfi_endproc
	.size	w_val_offset_sp, .-w_val_offset_sp

# ok_val_offset_sp0: kept: .cfi_val_offset rsp,0 is the default rule
	.type	ok_val_offset_sp0, @function
ok_val_offset_sp0:
	.cfi_startproc
	nop
	.cfi_val_offset 7, 0
	ret
	.cfi_endproc
	.size	ok_val_offset_sp0, .-ok_val_offset_sp0

# w_esc_val_offset_fp: DW_CFA_val_offset rbp via .cfi_escape
	.type	w_esc_val_offset_fp, @function
w_esc_val_offset_fp:
	.cfi_startproc
	nop
	.cfi_escape 0x14, 0x06, 0x02
	ret
	.cfi_endproc
	.size	w_esc_val_offset_fp, .-w_esc_val_offset_fp

# w_esc_val_offset_shape: DW_CFA_val_offset with a 2-byte uleb via .cfi_escape
	.type	w_esc_val_offset_shape, @function
w_esc_val_offset_shape:
	.cfi_startproc
	nop
	.cfi_escape 0x14, 0x07, 0x80, 0x01
	ret
	.cfi_endproc
	.size	w_esc_val_offset_shape, .-w_esc_val_offset_shape

# w_register_sp: .cfi_register rsp
	.type	w_register_sp, @function
w_register_sp:
	.cfi_startproc
	nop
	.cfi_register 7, 3
	ret
	.cfi_endproc
	.size	w_register_sp, .-w_register_sp

# w_window_save: .cfi_window_save (DW_CFA_GNU_window_save) on x86-64
	.type	w_window_save, @function
w_window_save:
	.cfi_startproc
	nop
	.cfi_window_save
	ret
	.cfi_endproc
	.size	w_window_save, .-w_window_save

# w_esc_negate_ra_pc: DW_CFA_AARCH64_negate_ra_state_with_pc byte on x86-64
	.type	w_esc_negate_ra_pc, @function
w_esc_negate_ra_pc:
	.cfi_startproc
	nop
	.cfi_escape 0x2c
	ret
	.cfi_endproc
	.size	w_esc_negate_ra_pc, .-w_esc_negate_ra_pc

# w_esc_expr_sp: DW_CFA_expression rsp
	.type	w_esc_expr_sp, @function
w_esc_expr_sp:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x07, 0x02, 0x77, 0x00
	ret
	.cfi_endproc
	.size	w_esc_expr_sp, .-w_esc_expr_sp

# w_esc_expr_cfareg: DW_CFA_expression of the current CFA register r10
	.type	w_esc_expr_cfareg, @function
w_esc_expr_cfareg:
	.cfi_startproc
	nop
	.cfi_def_cfa 10, 8
	nop
	.cfi_escape 0x10, 0x0a, 0x02, 0x76, 0x00
	ret
	.cfi_endproc
	.size	w_esc_expr_cfareg, .-w_esc_expr_cfareg

# ok_esc_expr_other: kept: DW_CFA_expression r12 is ignored
	.type	ok_esc_expr_other, @function
ok_esc_expr_other:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x0c, 0x02, 0x76, 0x78
	ret
	.cfi_endproc
	.size	ok_esc_expr_other, .-ok_esc_expr_other

# w_esc_expr_shape: DW_CFA_expression rbp with a 3-byte expression
	.type	w_esc_expr_shape, @function
w_esc_expr_shape:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x06, 0x03, 0x76, 0x00, 0x06
	ret
	.cfi_endproc
	.size	w_esc_expr_shape, .-w_esc_expr_shape

# w_esc_def_cfa_expr: DW_CFA_def_cfa_expression *(rsp+8): only breg6 is accepted
	.type	w_esc_def_cfa_expr, @function
w_esc_def_cfa_expr:
	.cfi_startproc
	nop
	.cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06
	ret
	.cfi_endproc
	.size	w_esc_def_cfa_expr, .-w_esc_def_cfa_expr

# w_esc_args_size: DW_CFA_GNU_args_size 16 with the CFA on rsp
	.type	w_esc_args_size, @function
w_esc_args_size:
	.cfi_startproc
	nop
	.cfi_escape 0x2e, 0x10
	ret
	.cfi_endproc
	.size	w_esc_args_size, .-w_esc_args_size

# ok_esc_args_size0: kept: DW_CFA_GNU_args_size 0
	.type	ok_esc_args_size0, @function
ok_esc_args_size0:
	.cfi_startproc
	nop
	.cfi_escape 0x2e, 0x00
	ret
	.cfi_endproc
	.size	ok_esc_args_size0, .-ok_esc_args_size0

# ok_esc_args_size_fp: kept: DW_CFA_GNU_args_size 16 with the CFA on rbp
	.type	ok_esc_args_size_fp, @function
ok_esc_args_size_fp:
	.cfi_startproc
	nop
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register 6
	nop
	.cfi_escape 0x2e, 0x10
	ret
	.cfi_endproc
	.size	ok_esc_args_size_fp, .-ok_esc_args_size_fp

# ok_esc_nops: kept: DW_CFA_nop bytes
	.type	ok_esc_nops, @function
ok_esc_nops:
	.cfi_startproc
	nop
	.cfi_escape 0x00, 0x00
	ret
	.cfi_endproc
	.size	ok_esc_nops, .-ok_esc_nops

# w_esc_val_expr: DW_CFA_val_expression (non-signal frame)
	.type	w_esc_val_expr, @function
w_esc_val_expr:
	.cfi_startproc
	nop
	.cfi_escape 0x16, 0x10, 0x03, 0x77, 0x08, 0x06
	ret
	.cfi_endproc
	.size	w_esc_val_expr, .-w_esc_val_expr

# w_esc_other_op: DW_CFA_GNU_negative_offset_extended rbx,2 (0x2f) via
# .cfi_escape: gas rejects escape opcodes it does not model, although the
# register is irrelevant; a reader of .eh_frame sees a harmless rbx rule
	.type	w_esc_other_op, @function
w_esc_other_op:
	.cfi_startproc
	nop
	.cfi_escape 0x2f, 0x03, 0x02
	ret
	.cfi_endproc
	.size	w_esc_other_op, .-w_esc_other_op

# w_undefined_fp: .cfi_undefined rbp
	.type	w_undefined_fp, @function
w_undefined_fp:
	.cfi_startproc
	nop
	.cfi_undefined 6
	ret
	.cfi_endproc
	.size	w_undefined_fp, .-w_undefined_fp

# w_undefined_sp: .cfi_undefined rsp
	.type	w_undefined_sp, @function
w_undefined_sp:
	.cfi_startproc
	nop
	.cfi_undefined 7
	ret
	.cfi_endproc
	.size	w_undefined_sp, .-w_undefined_sp

# w_val_encoded_addr: .cfi_val_encoded_addr (DW_CFA_val_expression in .eh_frame)
	.type	w_val_encoded_addr, @function
w_val_encoded_addr:
	.cfi_startproc
	nop
	.cfi_val_encoded_addr 6, 0x1b, w_val_encoded_addr
	ret
	.cfi_endproc
	.size	w_val_encoded_addr, .-w_val_encoded_addr

# w_label: .cfi_label (invisible in .eh_frame)
	.type	w_label, @function
w_label:
	.cfi_startproc
	nop
	.cfi_label .Lw_label
	ret
	.cfi_endproc
	.size	w_label, .-w_label

# w_remember_simple: .cfi_startproc simple + .cfi_remember_state with no FRE yet
	.type	w_remember_simple, @function
w_remember_simple:
	.cfi_startproc simple
	.cfi_remember_state
	nop
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	w_remember_simple, .-w_remember_simple

# w_def_cfa_offset_nobase: .cfi_startproc simple, an advance, then
# .cfi_def_cfa_offset with no CFA register ever set. (The same op at PC 0,
# before any advance, makes gas 2.47.50 abort with an internal error in
# sframe_xlate_ctx_get_cur_cfa_reg, so it is not included.)
	.type	w_def_cfa_offset_nobase, @function
w_def_cfa_offset_nobase:
	.cfi_startproc simple
	nop
	.cfi_def_cfa_offset 16
	nop
	ret
	.cfi_endproc
	.size	w_def_cfa_offset_nobase, .-w_def_cfa_offset_nobase
