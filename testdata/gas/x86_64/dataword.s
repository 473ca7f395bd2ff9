# dataword: FRE data-word sizes. 1-byte (sp+8, sp+120), 2-byte (CFA 300, 4104,
# -200, FP at c-400), 4-byte (CFA 70000, 0x7fffffff, FP at c-100000), and a
# negative CFA offset (.cfi_def_cfa rsp,-8 prints "sp+-8").
	.text
	.globl	words
	.type	words, @function
words:
	.cfi_startproc
	subq	$112, %rsp
	.cfi_def_cfa_offset 120
	subq	$180, %rsp
	.cfi_def_cfa_offset 300
	subq	$3804, %rsp
	.cfi_def_cfa_offset 4104
	subq	$65896, %rsp
	.cfi_def_cfa_offset 70000
	nop
	.cfi_def_cfa_offset 0x7fffffff
	nop
	.cfi_def_cfa 7, -8
	nop
	.cfi_def_cfa 7, -200
	nop
	.cfi_def_cfa 7, -0x80000000
	nop
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	words, .-words

	.globl	fpwords
	.type	fpwords, @function
fpwords:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -400
	nop
	.cfi_offset 6, -100000
	nop
	.cfi_offset 6, -16
	nop
	.cfi_def_cfa_offset 1000
	popq	%rbp
	.cfi_def_cfa_offset 8
	.cfi_restore 6
	ret
	.cfi_endproc
	.size	fpwords, .-fpwords
