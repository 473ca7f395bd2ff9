# remember: .cfi_remember_state/.cfi_restore_state around an early return.
	.text
	.globl	early_ret
	.type	early_ret, @function
early_ret:
	.cfi_startproc
	stmg	%r11,%r15,88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	ltr	%r2,%r2
	je	1f
	.cfi_remember_state
	lmg	%r11,%r15,248(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	.cfi_def_cfa_offset 160
	br	%r14
1:
	.cfi_restore_state
	brasl	%r14,early_ret
	lmg	%r11,%r15,248(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	early_ret, .-early_ret
