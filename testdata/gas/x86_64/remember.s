# remember: .cfi_remember_state / .cfi_restore_state around early returns
# (restore_state always right after an advance, as gcc emits it); nested
# remember/restore; restore_state re-emits an identical FRE.
	.text
	.globl	early_ret
	.type	early_ret, @function
early_ret:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register 6
	testl	%edi, %edi
	je	1f
	.cfi_remember_state
	popq	%rbp
	.cfi_def_cfa 7, 8
	ret
1:
	.cfi_restore_state
	nop
	popq	%rbp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	early_ret, .-early_ret

	.type	nested, @function
nested:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_remember_state
	pushq	%r12
	.cfi_def_cfa_offset 24
	.cfi_remember_state
	popq	%r12
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state
	nop
	popq	%r12
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state
	ret
	.cfi_endproc
	.size	nested, .-nested
