# fpra: s390x FP/RA save orders. fp_first: r11 saved before r14 (the default
# FDE writes a 0 padding word for RA: dump "U"). ra_first: r14 before r11.
# fp_only: r11 saved, r14 never (kept on s390x, unlike aarch64).
	.text
	.type	fp_first, @function
fp_first:
	.cfi_startproc
	stg	%r11,88(%r15)
	.cfi_offset 11, -72
	stg	%r14,112(%r15)
	.cfi_offset 14, -48
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	lg	%r14,272(%r15)
	.cfi_restore 14
	lg	%r11,248(%r15)
	.cfi_restore 11
	aghi	%r15,160
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	fp_first, .-fp_first

	.type	ra_first, @function
ra_first:
	.cfi_startproc
	stg	%r14,112(%r15)
	.cfi_offset 14, -48
	stg	%r11,88(%r15)
	.cfi_offset 11, -72
	lg	%r11,88(%r15)
	.cfi_restore 11
	lg	%r14,112(%r15)
	.cfi_restore 14
	br	%r14
	.cfi_endproc
	.size	ra_first, .-ra_first

	.type	fp_only, @function
fp_only:
	.cfi_startproc
	stg	%r11,88(%r15)
	.cfi_offset 11, -72
	lgr	%r11,%r15
	.cfi_def_cfa_register 11
	lg	%r11,88(%r15)
	.cfi_def_cfa_register 15
	.cfi_restore 11
	br	%r14
	.cfi_endproc
	.size	fp_only, .-fp_only
