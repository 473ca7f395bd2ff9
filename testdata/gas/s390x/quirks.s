# quirks: trailing duplicate FRE (q1), def_cfa_offset + def_cfa_register at
# the same PC after a committed FRE (q2) and at PC 0 (q3).
	.text
	.type	q1, @function
q1:
	.cfi_startproc
	stmg	%r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	nopr
	.cfi_offset 12, -64
	br	%r14
	.cfi_endproc
	.size	q1, .-q1

	.type	q2, @function
q2:
	.cfi_startproc
	nopr
	.cfi_def_cfa_offset 320
	.cfi_def_cfa_register 11
	br	%r14
	.cfi_endproc
	.size	q2, .-q2

	.type	q3, @function
q3:
	.cfi_startproc
	.cfi_def_cfa_offset 320
	.cfi_def_cfa_register 11
	br	%r14
	.cfi_endproc
	.size	q3, .-q3
