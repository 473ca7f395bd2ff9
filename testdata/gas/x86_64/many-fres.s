# many-fres: a function with 65538 FREs (> UINT16_MAX): skipped with "Number
# of FREs exceeds UINT16_MAX", leaving a header-only .sframe. No .frames file
# is kept for this input (too large as text).
	.text
	.type	too_many, @function
too_many:
	.cfi_startproc
	.rept	32768
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	.endr
	nop
	.cfi_def_cfa_offset 16
	ret
	.cfi_endproc
	.size	too_many, .-too_many
