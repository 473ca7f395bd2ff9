# addr2: a 300+ byte function (ADDR2 FRE start addresses), FREs on both sides
# of the 256-byte boundary.
	.text
	.globl	big
	.type	big, %function
big:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	.skip	300
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	big, .-big
