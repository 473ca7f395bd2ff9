# basic: gcc-style s390x frames. fp_frame: stmg r11-r15, 160-byte frame, CFA
# moved to r11 (the s390x FP), lmg epilogue with .cfi_restore. CFA offsets are
# stored encoded ((off-160)/8), RA (r14) and FP (r11) offsets raw. leaf: one FRE
# (sp+160). ra_only: only r14 saved (2 words).
	.text
	.globl	fp_frame
	.type	fp_frame, @function
fp_frame:
	.cfi_startproc
	stmg	%r11,%r15,88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	lgr	%r11,%r15
	.cfi_def_cfa_register 11
	brasl	%r14,leaf
	lmg	%r11,%r15,248(%r11)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	.cfi_def_cfa 15, 160
	br	%r14
	.cfi_endproc
	.size	fp_frame, .-fp_frame

	.globl	leaf
	.type	leaf, @function
leaf:
	.cfi_startproc
	ahi	%r2,1
	br	%r14
	.cfi_endproc
	.size	leaf, .-leaf

	.type	ra_only, @function
ra_only:
	.cfi_startproc
	stmg	%r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	brasl	%r14,leaf
	lmg	%r14,%r15,272(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	ra_only, .-ra_only
