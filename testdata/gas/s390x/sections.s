# sections: functions in .text, .text.other and .text.unlikely, interleaved.
	.text
	.type	t1, @function
t1:
	.cfi_startproc
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	aghi	%r15,160
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	t1, .-t1

	.section .text.other,"ax",@progbits
	.type	o1, @function
o1:
	.cfi_startproc
	br	%r14
	.cfi_endproc
	.size	o1, .-o1

	.text
	.type	t2, @function
t2:
	.cfi_startproc
	nopr
	br	%r14
	.cfi_endproc
	.size	t2, .-t2

	.section .text.unlikely,"ax",@progbits
	.type	u1, @function
u1:
	.cfi_startproc
	stmg	%r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	.long	0
	.cfi_endproc
	.size	u1, .-u1

	.section .text.other,"ax",@progbits
	.type	o2, @function
o2:
	.cfi_startproc
	br	%r14
	.cfi_endproc
	.size	o2, .-o2
