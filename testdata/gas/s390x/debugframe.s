# debugframe: big-endian .debug_frame only (.cfi_sections .debug_frame), no
# .eh_frame; --gsframe still emits .sframe.
	.cfi_sections .debug_frame
	.text
	.globl	df
	.type	df, @function
df:
	.cfi_startproc
	stmg	%r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	lmg	%r14,%r15,272(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	df, .-df
