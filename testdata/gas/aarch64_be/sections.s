# aarch64_be: same source as ../aarch64/sections.s, assembled with -EB (big-endian).
# sections: functions in .text, .text.other and .text.unlikely, interleaved,
# so .rela.sframe names three section symbols with per-section addends.
	.text
	.type	t1, %function
t1:
	.cfi_startproc
	sub	sp, sp, #16
	.cfi_def_cfa_offset 16
	add	sp, sp, 16
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	t1, .-t1

	.section .text.other,"ax",%progbits
	.type	o1, %function
o1:
	.cfi_startproc
	nop
	ret
	.cfi_endproc
	.size	o1, .-o1

	.text
	.type	t2, %function
t2:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	t2, .-t2

	.section .text.unlikely,"ax",%progbits
	.type	u1, %function
u1:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	brk	#1000
	.cfi_endproc
	.size	u1, .-u1

	.section .text.other,"ax",%progbits
	.type	o2, %function
o2:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	o2, .-o2
