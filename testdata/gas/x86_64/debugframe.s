# debugframe: .cfi_sections .debug_frame: the CFI goes to .debug_frame (CIE
# version 1 in gas? see .frames) and there is no .eh_frame; --gsframe still
# emits .sframe from the same CFI.
	.cfi_sections .debug_frame
	.text
	.globl	df
	.type	df, @function
df:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register 6
	leave
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	df, .-df
