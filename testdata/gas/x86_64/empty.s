# empty: an empty .cfi_startproc/.cfi_endproc (size 0, one FRE from the CIE's
# def_cfa); a "simple" function with no CFI (0 FREs); a "simple" function with
# its own def_cfa; and a normal one-instruction function.
	.text
	.type	e0, @function
e0:
	.cfi_startproc
	.cfi_endproc
	.size	e0, .-e0

	.type	e_simple, @function
e_simple:
	.cfi_startproc simple
	nop
	ret
	.cfi_endproc
	.size	e_simple, .-e_simple

	.type	e_simple_cfa, @function
e_simple_cfa:
	.cfi_startproc simple
	.cfi_def_cfa 7, 8
	nop
	ret
	.cfi_endproc
	.size	e_simple_cfa, .-e_simple_cfa

	.type	e1, @function
e1:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	e1, .-e1
