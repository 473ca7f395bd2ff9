# addr2: a 300+ byte function: SFRAME_FRE_TYPE_ADDR2 (2-byte FRE start addresses),
# with FREs before and after the 256-byte boundary. Also one exactly 255 bytes
# long (still ADDR1) and one exactly 256 bytes long (ADDR2).
	.text
	.globl	big
	.type	big, @function
big:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	.skip	300, 0x90
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	big, .-big

	.type	size255, @function
size255:
	.cfi_startproc
	pushq	%rax
	.cfi_def_cfa_offset 16
	.skip	252, 0x90
	popq	%rcx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	size255, .-size255

	.type	size256, @function
size256:
	.cfi_startproc
	pushq	%rax
	.cfi_def_cfa_offset 16
	.skip	253, 0x90
	popq	%rcx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	size256, .-size256
