# dataword: data-word sizes on aarch64: CFA 1-byte/2-byte/4-byte, RA and FP
# offsets needing 2 and 4 bytes (the size is the max over CFA, RA, FP).
	.text
	.globl	words
	.type	words, %function
words:
	.cfi_startproc
	sub	sp, sp, #4096
	.cfi_def_cfa_offset 4096
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 4112
	.cfi_offset 29, -4112
	.cfi_offset 30, -4104
	sub	sp, sp, #65536
	.cfi_def_cfa_offset 69648
	nop
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	nop
	.cfi_offset 30, -200
	nop
	.cfi_offset 30, -8
	.cfi_offset 29, -100000
	nop
	.cfi_def_cfa_offset 0
	.cfi_restore 29
	.cfi_restore 30
	ret
	.cfi_endproc
	.size	words, .-words
