# argsize: DW_CFA_GNU_args_size via .cfi_escape as gcc emits it around calls
# in code with -fno-omit-frame-pointer (CFA on rbp: accepted), plus
# .cfi_adjust_cfa_offset pairs (converted to absolute def_cfa_offset by gas).
	.text
	.globl	caller
	.type	caller, @function
caller:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register 6
	pushq	$1
	.cfi_escape 0x2e, 0x08
	call	caller
	addq	$8, %rsp
	.cfi_escape 0x2e, 0x00
	leave
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	caller, .-caller

	.type	adjust, @function
adjust:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	adjust, .-adjust
