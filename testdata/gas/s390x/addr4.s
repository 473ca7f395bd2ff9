# addr4: a function larger than 65535 bytes (ADDR4), then a small one.
	.text
	.globl	huge
	.type	huge, @function
huge:
	.cfi_startproc
	stmg	%r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	.fill	35000, 2, 0x0700
	lmg	%r14,%r15,272(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	huge, .-huge

	.type	small, @function
small:
	.cfi_startproc
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	aghi	%r15,160
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	small, .-small
