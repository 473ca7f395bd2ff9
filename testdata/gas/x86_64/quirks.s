# quirks: gas translation quirks (reference section 6.2/3.2).
# q1: trailing duplicate FRE (the last advance is followed only by an
#     irrelevant .cfi_offset rbx; the scratch FRE is committed anyway).
# q2: .cfi_def_cfa_offset + .cfi_def_cfa_register at the same PC after a
#     committed FRE: the offset comes from the last committed FRE (fp+8).
# q3: the same at PC 0 (nothing committed yet): fp+16.
# q4: a no-op .cfi_def_cfa_offset 8 still starts a new, identical FRE.
# q5: CFI after the last instruction (an FRE starting at the function end).
# q6: .cfi_offset of a callee-saved GPR and .cfi_restore 12 only move boundaries.
	.text
	.type	q1, @function
q1:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	nop
	.cfi_offset 3, -24
	ret
	.cfi_endproc
	.size	q1, .-q1

	.type	q2, @function
q2:
	.cfi_startproc
	nop
	.cfi_def_cfa_offset 16
	.cfi_def_cfa_register 6
	ret
	.cfi_endproc
	.size	q2, .-q2

	.type	q3, @function
q3:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	.cfi_def_cfa_register 6
	ret
	.cfi_endproc
	.size	q3, .-q3

	.type	q4, @function
q4:
	.cfi_startproc
	nop
	.cfi_def_cfa_offset 8
	nop
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	q4, .-q4

	.type	q5, @function
q5:
	.cfi_startproc
	pushq	%rax
	.cfi_def_cfa_offset 16
	popq	%rax
	.cfi_def_cfa_offset 8
	ret
	.cfi_def_cfa_offset 16
	.cfi_endproc
	.size	q5, .-q5

	.type	q6, @function
q6:
	.cfi_startproc
	pushq	%r12
	.cfi_def_cfa_offset 16
	.cfi_offset 12, -16
	nop
	.cfi_offset 3, -24
	nop
	.cfi_restore 12
	nop
	popq	%r12
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	q6, .-q6
