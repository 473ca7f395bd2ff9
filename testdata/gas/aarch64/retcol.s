# retcol: non-default return column (.cfi_return_column 29 and 31) skipped;
# .cfi_return_column 30 (the default) kept.
	.text
	.type	rc29, %function
rc29:
	.cfi_startproc
	.cfi_return_column 29
	nop
	ret
	.cfi_endproc
	.size	rc29, .-rc29

	.type	rc30, %function
rc30:
	.cfi_startproc
	.cfi_return_column 30
	nop
	ret
	.cfi_endproc
	.size	rc30, .-rc30
