# undefined: outermost frames: .cfi_undefined x30 at entry (all FREs "RA
# undefined"), and in the middle of a function (sticky); same_ra:
# .cfi_same_value x30 clears "RA undefined" on aarch64 (RA tracked); fp_no_ra:
# x29 saved and RA made same-value: gas rejects it ("FP without RA on stack").
	.text
	.globl	_start
	.type	_start, %function
_start:
	.cfi_startproc
	.cfi_undefined 30
	mov	x29, #0
	sub	sp, sp, #16
	.cfi_def_cfa_offset 16
	bl	_start
	.cfi_endproc
	.size	_start, .-_start

	.type	undef_late, %function
undef_late:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	nop
	.cfi_undefined 30
	nop
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	undef_late, .-undef_late

	.type	same_ra, %function
same_ra:
	.cfi_startproc
	.cfi_undefined 30
	nop
	.cfi_same_value 30
	nop
	.cfi_offset 30, -8
	ret
	.cfi_endproc
	.size	same_ra, .-same_ra

	.type	fp_no_ra, %function
fp_no_ra:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	nop
	.cfi_same_value 30
	ret
	.cfi_endproc
	.size	fp_no_ra, .-fp_no_ra
