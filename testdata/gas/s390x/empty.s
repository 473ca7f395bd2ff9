# empty: empty .cfi_startproc/.cfi_endproc (size 0), a "simple" function
# without CFI (0 FREs), a one-instruction function.
	.text
	.type	e0, @function
e0:
	.cfi_startproc
	.cfi_endproc
	.size	e0, .-e0

	.type	e_simple, @function
e_simple:
	.cfi_startproc simple
	br	%r14
	.cfi_endproc
	.size	e_simple, .-e_simple

	.type	e1, @function
e1:
	.cfi_startproc
	br	%r14
	.cfi_endproc
	.size	e1, .-e1
