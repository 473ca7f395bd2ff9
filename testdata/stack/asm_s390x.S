/* long asm_frame(long (*cb)(long), long x): cb(x) + 1, with a frame. */
	.text
	.globl	asm_frame
	.type	asm_frame, @function
asm_frame:
	.cfi_startproc
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi	%r15, -160
	.cfi_def_cfa_offset 320
	lgr	%r1, %r2
	lgr	%r2, %r3
	basr	%r14, %r1
	aghi	%r2, 1
	lmg	%r14, %r15, 272(%r15)
	.cfi_restore 14
	.cfi_restore 15
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	asm_frame, .-asm_frame
	.section .note.GNU-stack,"",@progbits
