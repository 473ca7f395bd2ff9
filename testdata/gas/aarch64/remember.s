# remember: .cfi_remember_state/.cfi_restore_state around an early return
# (gcc shrink-wrapping style), including the mangled-RA state.
	.arch	armv8.3-a
	.text
	.globl	early_ret
	.type	early_ret, %function
early_ret:
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x29, sp
	cbz	x0, 1f
	.cfi_remember_state
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	autiasp
	.cfi_negate_ra_state
	ret
1:
	.cfi_restore_state
	bl	early_ret
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	early_ret, .-early_ret
