# flex: s390x flex FDEs. cfa_r10: CFA on r10 (non-SP/FP); the flex CFA offset
# is still stored encoded. fpr_save: RA and FP saved in floating-point
# registers (.cfi_register 14, 16 = f0; 11, 17 = f2) as gcc does for leaf
# functions with -O2; then restored (.cfi_restore). sp_reg: .cfi_register 15
# (SP) is ignored on s390x.
	.text
	.type	cfa_r10, @function
cfa_r10:
	.cfi_startproc
	lgr	%r10,%r15
	.cfi_def_cfa_register 10
	aghi	%r15,-160
	lgr	%r15,%r10
	.cfi_def_cfa_register 15
	br	%r14
	.cfi_endproc
	.size	cfa_r10, .-cfa_r10

	.type	fpr_save, @function
fpr_save:
	.cfi_startproc
	ldgr	%f0,%r14
	.cfi_register 14, 16
	ldgr	%f2,%r11
	.cfi_register 11, 17
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	aghi	%r15,160
	.cfi_def_cfa_offset 160
	lgdr	%r11,%f2
	.cfi_restore 11
	lgdr	%r14,%f0
	.cfi_restore 14
	br	%r14
	.cfi_endproc
	.size	fpr_save, .-fpr_save

	.type	sp_reg, @function
sp_reg:
	.cfi_startproc
	ldgr	%f4,%r15
	.cfi_register 15, 18
	nopr
	.cfi_same_value 15
	br	%r14
	.cfi_endproc
	.size	sp_reg, .-sp_reg
