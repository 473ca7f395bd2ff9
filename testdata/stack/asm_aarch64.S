/* long asm_frame(long (*cb)(long), long x): cb(x) + 1, with a frame. */
	.text
	.globl	asm_frame
	.type	asm_frame, %function
asm_frame:
	.cfi_startproc
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	str	x19, [sp, #16]
	.cfi_offset 19, -16
	mov	x19, x0
	mov	x0, x1
	blr	x19
	add	x0, x0, #1
	ldr	x19, [sp, #16]
	.cfi_restore 19
	ldp	x29, x30, [sp], #32
	.cfi_restore 29
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	asm_frame, .-asm_frame
	.section .note.GNU-stack,"",%progbits
