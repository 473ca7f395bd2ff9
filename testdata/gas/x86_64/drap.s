# drap: GCC's stack-realignment (DRAP) prologue/epilogue. CFA on r10, then
# DW_CFA_expression rbp = *(rbp+0) (.cfi_escape 0x10,0x06,0x02,0x76,0x00) and
# DW_CFA_def_cfa_expression CFA = *(rbp-8) (.cfi_escape 0x0f,0x03,0x76,0x78,0x06):
# a flex FDE; every FRE is flex-encoded, including the first sp+8.
	.text
	.globl	drap
	.type	drap, @function
drap:
	.cfi_startproc
	leaq	8(%rsp), %r10
	.cfi_def_cfa 10, 0
	andq	$-64, %rsp
	pushq	-8(%r10)
	pushq	%rbp
	movq	%rsp, %rbp
	.cfi_escape 0x10,0x06,0x02,0x76,0x00
	pushq	%r10
	.cfi_escape 0x0f,0x03,0x76,0x78,0x06
	subq	$200, %rsp
	nop
	addq	$200, %rsp
	popq	%r10
	.cfi_def_cfa 10, 0
	popq	%rbp
	leaq	-8(%r10), %rsp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	drap, .-drap
