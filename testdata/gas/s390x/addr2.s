# addr2: a 300+ byte function (ADDR2 FRE start addresses).
	.text
	.globl	big
	.type	big, @function
big:
	.cfi_startproc
	stmg	%r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	.fill	150, 2, 0x0700
	lmg	%r14,%r15,272(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	big, .-big
