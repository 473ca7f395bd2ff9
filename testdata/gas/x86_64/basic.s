# basic: two small functions, ADDR1 FREs, 1-byte data words.
# fp_frame: classic rbp frame (CFA moves to fp, FP saved at c-16, no .cfi_restore
# so FP stays tracked after the pop). sp_frame: sp-only frame, a callee-saved
# register save (.cfi_offset rbx) that creates no FRE of its own.
	.text
	.globl	fp_frame
	.type	fp_frame, @function
fp_frame:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register 6
	nop
	popq	%rbp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	fp_frame, .-fp_frame

	.globl	sp_frame
	.type	sp_frame, @function
sp_frame:
	.cfi_startproc
	subq	$24, %rsp
	.cfi_def_cfa_offset 32
	movq	%rbx, 8(%rsp)
	.cfi_offset 3, -24
	nop
	movq	8(%rsp), %rbx
	.cfi_restore 3
	addq	$24, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sp_frame, .-sp_frame
