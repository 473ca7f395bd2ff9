# restore: .cfi_restore semantics. The reference state is the FIRST committed
# FRE (state at the first advance), which includes FDE ops placed before the
# first instruction (r_early: FP saved at PC 0, so .cfi_restore 6 keeps it).
# r_pr33170: .cfi_restore rbp before any FRE is committed. .cfi_restore rip is
# ignored on x86-64.
	.text
	.type	r_plain, @function
r_plain:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	popq	%rbp
	.cfi_def_cfa_offset 8
	.cfi_restore 6
	ret
	.cfi_endproc
	.size	r_plain, .-r_plain

	.type	r_early, @function
r_early:
	.cfi_startproc
	.cfi_offset 6, -24
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	popq	%rbp
	.cfi_def_cfa_offset 8
	.cfi_restore 6
	ret
	.cfi_endproc
	.size	r_early, .-r_early

	.type	r_pr33170, @function
r_pr33170:
	.cfi_startproc
	.cfi_restore 6
	pushq	%rbp
	.cfi_def_cfa_offset 16
	nop
	.cfi_restore 16
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	r_pr33170, .-r_pr33170
