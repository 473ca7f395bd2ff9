# addr4: a function larger than 65535 bytes: SFRAME_FRE_TYPE_ADDR4 (4-byte FRE
# start addresses); FREs at 0, 1, 0x11171 and 0x11172. Followed by a small
# function to show the choice is per function.
	.text
	.globl	huge
	.type	huge, @function
huge:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.fill	70000, 1, 0x90
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	huge, .-huge

	.type	small, @function
small:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	small, .-small
