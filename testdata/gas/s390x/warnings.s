# warnings: one function per s390x "no SFrame FDE emitted" reason that is
# reachable on this ABI, in order (the .gs.warnings lines follow the w_*
# functions). ok_* functions are kept.
	.text

# w_def_cfa_big: .cfi_def_cfa encoded offset beyond int32
	.type	w_def_cfa_big, @function
w_def_cfa_big:
	.cfi_startproc
	nopr
	.cfi_def_cfa 15, 0x400000000
	br	%r14
	.cfi_endproc
	.size	w_def_cfa_big, .-w_def_cfa_big

# w_def_cfa_offset_big: .cfi_def_cfa_offset encoded offset beyond int32
	.type	w_def_cfa_offset_big, @function
w_def_cfa_offset_big:
	.cfi_startproc
	nopr
	.cfi_def_cfa_offset 0x400000000
	br	%r14
	.cfi_endproc
	.size	w_def_cfa_offset_big, .-w_def_cfa_offset_big

# w_def_cfa_offset_nobase: .cfi_startproc simple, advance, .cfi_def_cfa_offset with no CFA register
	.type	w_def_cfa_offset_nobase, @function
w_def_cfa_offset_nobase:
	.cfi_startproc simple
	nopr
	.cfi_def_cfa_offset 320
	br	%r14
	.cfi_endproc
	.size	w_def_cfa_offset_nobase, .-w_def_cfa_offset_nobase

# w_val_offset_fp: .cfi_val_offset r11
	.type	w_val_offset_fp, @function
w_val_offset_fp:
	.cfi_startproc
	nopr
	.cfi_val_offset 11, -72
	br	%r14
	.cfi_endproc
	.size	w_val_offset_fp, .-w_val_offset_fp

# w_val_offset_ra: .cfi_val_offset r14
	.type	w_val_offset_ra, @function
w_val_offset_ra:
	.cfi_startproc
	nopr
	.cfi_val_offset 14, -48
	br	%r14
	.cfi_endproc
	.size	w_val_offset_ra, .-w_val_offset_ra

# w_val_offset_sp: .cfi_val_offset r15 not -160
	.type	w_val_offset_sp, @function
w_val_offset_sp:
	.cfi_startproc
	nopr
	.cfi_val_offset 15, 0
	br	%r14
	.cfi_endproc
	.size	w_val_offset_sp, .-w_val_offset_sp

# ok_val_offset_sp: kept: r15 val_offset -160 is the default
	.type	ok_val_offset_sp, @function
ok_val_offset_sp:
	.cfi_startproc
	nopr
	.cfi_val_offset 15, -160
	br	%r14
	.cfi_endproc
	.size	ok_val_offset_sp, .-ok_val_offset_sp

# ok_register_sp: kept: .cfi_register r15 is ignored on s390x
	.type	ok_register_sp, @function
ok_register_sp:
	.cfi_startproc
	nopr
	.cfi_register 15, 18
	br	%r14
	.cfi_endproc
	.size	ok_register_sp, .-ok_register_sp

# w_window_save: .cfi_window_save
	.type	w_window_save, @function
w_window_save:
	.cfi_startproc
	nopr
	.cfi_window_save
	br	%r14
	.cfi_endproc
	.size	w_window_save, .-w_window_save

# w_esc_expr_ra: DW_CFA_expression r14
	.type	w_esc_expr_ra, @function
w_esc_expr_ra:
	.cfi_startproc
	nopr
	.cfi_escape 0x10, 0x0e, 0x02, 0x7f, 0x08
	br	%r14
	.cfi_endproc
	.size	w_esc_expr_ra, .-w_esc_expr_ra

# w_esc_expr_sp: DW_CFA_expression r15
	.type	w_esc_expr_sp, @function
w_esc_expr_sp:
	.cfi_startproc
	nopr
	.cfi_escape 0x10, 0x0f, 0x02, 0x7f, 0x08
	br	%r14
	.cfi_endproc
	.size	w_esc_expr_sp, .-w_esc_expr_sp

# w_esc_def_cfa_expr: DW_CFA_def_cfa_expression
	.type	w_esc_def_cfa_expr, @function
w_esc_def_cfa_expr:
	.cfi_startproc
	nopr
	.cfi_escape 0x0f, 0x03, 0x7f, 0x08, 0x06
	br	%r14
	.cfi_endproc
	.size	w_esc_def_cfa_expr, .-w_esc_def_cfa_expr

# w_esc_args_size: DW_CFA_GNU_args_size with CFA on r15
	.type	w_esc_args_size, @function
w_esc_args_size:
	.cfi_startproc
	nopr
	.cfi_escape 0x2e, 0x10
	br	%r14
	.cfi_endproc
	.size	w_esc_args_size, .-w_esc_args_size

# w_undefined_fp: .cfi_undefined r11
	.type	w_undefined_fp, @function
w_undefined_fp:
	.cfi_startproc
	nopr
	.cfi_undefined 11
	br	%r14
	.cfi_endproc
	.size	w_undefined_fp, .-w_undefined_fp

# w_undefined_sp: .cfi_undefined r15
	.type	w_undefined_sp, @function
w_undefined_sp:
	.cfi_startproc
	nopr
	.cfi_undefined 15
	br	%r14
	.cfi_endproc
	.size	w_undefined_sp, .-w_undefined_sp

# w_val_encoded_addr: .cfi_val_encoded_addr
	.type	w_val_encoded_addr, @function
w_val_encoded_addr:
	.cfi_startproc
	nopr
	.cfi_val_encoded_addr 12, 0x1b, w_val_encoded_addr
	br	%r14
	.cfi_endproc
	.size	w_val_encoded_addr, .-w_val_encoded_addr

# w_label: .cfi_label
	.type	w_label, @function
w_label:
	.cfi_startproc
	nopr
	.cfi_label .Lw_label
	br	%r14
	.cfi_endproc
	.size	w_label, .-w_label

# w_remember_simple: .cfi_startproc simple + .cfi_remember_state
	.type	w_remember_simple, @function
w_remember_simple:
	.cfi_startproc simple
	.cfi_remember_state
	nopr
	.cfi_def_cfa 15, 160
	br	%r14
	.cfi_endproc
	.size	w_remember_simple, .-w_remember_simple
