# signal: .cfi_signal_frame (CIE augmentation "zRS", FDE func_info bit 7, "S"
# in the dump). sig_ok translates normally; sig_fail has an unsupported op
# (DW_CFA_val_expression via .cfi_escape 0x16) before any FRE is committed, so
# gas warns ".cfi_escape with op (0x16)" but keeps the FDE with 0 FREs and the
# signal bit. sig_fail_late fails after FREs were committed: gas 2.47.50 also
# gives 0 FREs + "S" (gas 2.46.0 read freed memory here). nosig is a plain
# function sharing the file (different CIE).
	.text
	.globl	sig_ok
	.type	sig_ok, @function
sig_ok:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_def_cfa 7, 160
	nop
	.cfi_offset 6, -48
	movq	%rsp, %rdi
	ret
	.cfi_endproc
	.size	sig_ok, .-sig_ok

	.type	sig_fail, @function
sig_fail:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_escape 0x16,0x10,0x03,0x77,0x08,0x06
	nop
	ret
	.cfi_endproc
	.size	sig_fail, .-sig_fail

	.type	sig_fail_late, @function
sig_fail_late:
	.cfi_startproc
	.cfi_signal_frame
	pushq	%rax
	.cfi_def_cfa_offset 16
	nop
	.cfi_escape 0x16,0x10,0x03,0x77,0x08,0x06
	popq	%rax
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sig_fail_late, .-sig_fail_late

	.type	nosig, @function
nosig:
	.cfi_startproc
	pushq	%rax
	.cfi_def_cfa_offset 16
	popq	%rax
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	nosig, .-nosig
