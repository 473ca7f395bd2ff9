# fp: frame-pointer save/restore variants. FP saved then .cfi_restore (back to
# "u"), .cfi_same_value rbp, FP saved twice at different slots, FP rule set
# before the first instruction, and a push/pop rbp pair without any CFA change
# except the offset (leaf with fp saved but CFA on sp).
	.text
	.globl	fp_restore
	.type	fp_restore, @function
fp_restore:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register 6
	nop
	leave
	.cfi_def_cfa 7, 8
	.cfi_restore 6
	ret
	.cfi_endproc
	.size	fp_restore, .-fp_restore

	.type	fp_same, @function
fp_same:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	popq	%rbp
	.cfi_def_cfa_offset 8
	.cfi_same_value 6
	ret
	.cfi_endproc
	.size	fp_same, .-fp_same

	.type	fp_twice, @function
fp_twice:
	.cfi_startproc
	.cfi_offset 6, -24
	subq	$24, %rsp
	.cfi_def_cfa_offset 32
	.cfi_offset 6, -32
	nop
	.cfi_rel_offset 6, 8
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	.cfi_endproc
	.size	fp_twice, .-fp_twice
