# retcol: non-default return column (.cfi_return_column 5): the function is
# skipped with "non-default RA register 5"; its neighbour (own CIE) is kept.
	.text
	.type	rc5, @function
rc5:
	.cfi_startproc
	.cfi_return_column 5
	nop
	ret
	.cfi_endproc
	.size	rc5, .-rc5

	.type	rc16, @function
rc16:
	.cfi_startproc
	.cfi_return_column 16
	nop
	ret
	.cfi_endproc
	.size	rc16, .-rc16
