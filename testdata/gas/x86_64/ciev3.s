# ciev3: .eh_frame with CIE version 3 (--gdwarf-cie-version=3: the return
# address column is a ULEB128), otherwise like basic.s.
# as-flags: --gdwarf-cie-version=3
	.text
	.globl	v3
	.type	v3, @function
v3:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register 6
	popq	%rbp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	v3, .-v3
