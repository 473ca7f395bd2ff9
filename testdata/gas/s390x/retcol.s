# retcol: non-default return column (.cfi_return_column 13) skipped; 14 kept.
	.text
	.type	rc13, @function
rc13:
	.cfi_startproc
	.cfi_return_column 13
	nopr
	br	%r14
	.cfi_endproc
	.size	rc13, .-rc13

	.type	rc14, @function
rc14:
	.cfi_startproc
	.cfi_return_column 14
	nopr
	br	%r14
	.cfi_endproc
	.size	rc14, .-rc14
