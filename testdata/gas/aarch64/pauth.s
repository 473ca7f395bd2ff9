# pauth: return-address signing. pac_a: paciasp + .cfi_negate_ra_state (FRE
# info bit 7 "mangled RA", "[s]" in the dump), autiasp toggles it back.
# pac_b: .cfi_b_key_frame (CIE augmentation "zRB", func_info bit 5, "pauth =
# B key" in the dump). pac_b_leaf: B key with no FP/RA save. twice: two
# negate_ra_state in one function (toggle on, off, on).
	.arch	armv8.3-a
	.text
	.globl	pac_a
	.type	pac_a, %function
pac_a:
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x29, sp
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	pac_a, .-pac_a

	.globl	pac_b
	.type	pac_b, %function
pac_b:
	.cfi_startproc
	.cfi_b_key_frame
	pacibsp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	retab
	.cfi_endproc
	.size	pac_b, .-pac_b

	.type	pac_b_leaf, %function
pac_b_leaf:
	.cfi_startproc
	.cfi_b_key_frame
	nop
	ret
	.cfi_endproc
	.size	pac_b_leaf, .-pac_b_leaf

	.type	twice, %function
twice:
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	nop
	autiasp
	.cfi_negate_ra_state
	nop
	paciasp
	.cfi_window_save
	autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	twice, .-twice
