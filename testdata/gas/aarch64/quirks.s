# quirks: trailing duplicate FRE (q1), def_cfa_offset + def_cfa_register at
# the same PC after a committed FRE (q2: offset from the last committed FRE),
# the same at PC 0 (q3), and .cfi_restore x30 reverting to the first FRE (q4).
	.text
	.type	q1, %function
q1:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	nop
	.cfi_offset 19, -32
	ret
	.cfi_endproc
	.size	q1, .-q1

	.type	q2, %function
q2:
	.cfi_startproc
	nop
	.cfi_def_cfa_offset 16
	.cfi_def_cfa_register 29
	ret
	.cfi_endproc
	.size	q2, .-q2

	.type	q3, %function
q3:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	.cfi_def_cfa_register 29
	ret
	.cfi_endproc
	.size	q3, .-q3

	.type	q4, %function
q4:
	.cfi_startproc
	.cfi_offset 30, -8
	nop
	.cfi_offset 30, -16
	nop
	.cfi_restore 30
	ret
	.cfi_endproc
	.size	q4, .-q4
