# undefined: outermost frames. .cfi_undefined rip at entry (like _start): every
# FRE is "RA undefined" (info 0x00, no data words), sticky across later CFA
# changes; .cfi_offset rip,-8 does not clear it on x86-64. undef_late marks RA
# undefined in the middle of a function.
	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined 16
	xorl	%ebp, %ebp
	pushq	%rax
	.cfi_def_cfa_offset 16
	nop
	.cfi_offset 16, -8
	hlt
	.cfi_endproc
	.size	_start, .-_start

	.type	undef_late, @function
undef_late:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	nop
	.cfi_undefined 16
	hlt
	.cfi_endproc
	.size	undef_late, .-undef_late
