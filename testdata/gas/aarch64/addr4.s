# addr4: a function larger than 65535 bytes (ADDR4 FRE start addresses),
# then a small one (ADDR1).
	.text
	.globl	huge
	.type	huge, %function
huge:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	.fill	17500, 4, 0xd503201f
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	huge, .-huge

	.type	small, %function
small:
	.cfi_startproc
	sub	sp, sp, #16
	.cfi_def_cfa_offset 16
	add	sp, sp, 16
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	small, .-small
