# ehdebug: .cfi_sections .eh_frame, .debug_frame: both sections hold the same
# CFI; the SFrame output is the same as from either.
	.cfi_sections .eh_frame, .debug_frame
	.text
	.globl	both
	.type	both, @function
both:
	.cfi_startproc
	pushq	%r15
	.cfi_def_cfa_offset 16
	.cfi_offset 15, -16
	subq	$4096, %rsp
	.cfi_def_cfa_offset 4112
	addq	$4096, %rsp
	.cfi_def_cfa_offset 16
	popq	%r15
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	both, .-both
