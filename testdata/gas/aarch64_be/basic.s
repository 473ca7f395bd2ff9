# aarch64_be: same source as ../aarch64/basic.s, assembled with -EB (big-endian).
# basic: gcc-style aarch64 frames. fp_frame: stp x29,x30 pre-index, CFA to x29
# (FRE words CFA, RA, FP). leaf: no frame, one FRE (sp+0). sp_only: stack
# allocation without saving x29/x30 (1 word). ra_only: x30 saved alone
# (2 words: CFA, RA).
	.text
	.globl	fp_frame
	.type	fp_frame, %function
fp_frame:
	.cfi_startproc
	stp	x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	.cfi_def_cfa_register 29
	bl	leaf
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa 31, 0
	ret
	.cfi_endproc
	.size	fp_frame, .-fp_frame

	.globl	leaf
	.type	leaf, %function
leaf:
	.cfi_startproc
	add	x0, x0, 1
	ret
	.cfi_endproc
	.size	leaf, .-leaf

	.type	sp_only, %function
sp_only:
	.cfi_startproc
	sub	sp, sp, #64
	.cfi_def_cfa_offset 64
	add	sp, sp, 64
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	sp_only, .-sp_only

	.type	ra_only, %function
ra_only:
	.cfi_startproc
	str	x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 30, -16
	bl	leaf
	ldr	x30, [sp], 16
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	ra_only, .-ra_only
