# debugframe: .cfi_sections .debug_frame: the CFI goes to .debug_frame (CIE
# id 0xffffffff, version 1, empty augmentation, absolute 8-byte FDE
# addresses: R_X86_64_32 for the CIE pointer, R_X86_64_64 for the start)
# and there is no .eh_frame;
# --gsframe still emits .sframe from the same CFI.
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
