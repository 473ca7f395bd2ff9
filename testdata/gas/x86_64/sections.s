# sections: functions in three text sections (.text, .text.other,
# .text.unlikely) interleaved, so the .rela.sframe relocations name different
# section symbols with per-section addends, in .cfi_startproc order.
	.text
	.type	t1, @function
t1:
	.cfi_startproc
	pushq	%rax
	.cfi_def_cfa_offset 16
	popq	%rax
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	t1, .-t1

	.section .text.other,"ax",@progbits
	.type	o1, @function
o1:
	.cfi_startproc
	nop
	ret
	.cfi_endproc
	.size	o1, .-o1

	.text
	.type	t2, @function
t2:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	t2, .-t2

	.section .text.unlikely,"ax",@progbits
	.type	u1, @function
u1:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	ud2
	.cfi_endproc
	.size	u1, .-u1

	.section .text.other,"ax",@progbits
	.type	o2, @function
o2:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	o2, .-o2
