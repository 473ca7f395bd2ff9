# dataword: s390x data-word sizes with the encoded CFA offset (off-160)/8:
# 1 byte up to 127*8+160=1176, 2 bytes (CFA 1184, 65536), 4 bytes (CFA
# 300000); large RA/FP slot offsets (2 and 4 bytes); CFA offsets that are not
# multiples of 8 (C division truncates toward zero: 164 -> 0, 150 -> -1) and
# below 160 (CFA 8 -> -19).
	.text
	.globl	words
	.type	words, @function
words:
	.cfi_startproc
	stmg	%r11,%r15,88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	aghi	%r15,-1024
	.cfi_def_cfa_offset 1184
	agfi	%r15,-64352
	.cfi_def_cfa_offset 65536
	agfi	%r15,-234464
	.cfi_def_cfa_offset 300000
	nopr
	.cfi_def_cfa_offset 1176
	.cfi_offset 14, -400
	nopr
	.cfi_offset 11, -100000
	nopr
	.cfi_def_cfa_offset 164
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	nopr
	.cfi_def_cfa_offset 150
	nopr
	.cfi_def_cfa_offset 8
	nopr
	.cfi_def_cfa_offset 160
	.cfi_restore 11
	.cfi_restore 14
	br	%r14
	.cfi_endproc
	.size	words, .-words
