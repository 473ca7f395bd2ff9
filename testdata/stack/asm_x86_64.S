/* long asm_frame(long (*cb)(long), long x): cb(x) + 1, with a frame. */
	.text
	.globl	asm_frame
	.type	asm_frame, @function
asm_frame:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rbx
	.cfi_offset %rbx, -24
	subq	$8, %rsp
	movq	%rdi, %rax
	movq	%rsi, %rdi
	call	*%rax
	addq	$1, %rax
	movq	-8(%rbp), %rbx
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	asm_frame, .-asm_frame
	.section .note.GNU-stack,"",@progbits
