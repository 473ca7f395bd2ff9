# undefined: outermost frames: .cfi_undefined r14 at entry (all FREs "RA
# undefined"), and after a frame was set up (sticky).
	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined 14
	xgr	%r11,%r11
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	brasl	%r14,_start
	.cfi_endproc
	.size	_start, .-_start

	.type	undef_late, @function
undef_late:
	.cfi_startproc
	stmg	%r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	nopr
	.cfi_undefined 14
	nopr
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	undef_late, .-undef_late
