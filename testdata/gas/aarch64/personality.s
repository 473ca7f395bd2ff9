# personality: .cfi_personality/.cfi_lsda (CIE augmentation "zPLR") on aarch64,
# with the B key too ("zPLRB").
	.arch	armv8.3-a
	.text
	.globl	with_eh
	.type	with_eh, %function
with_eh:
	.cfi_startproc
	.cfi_personality 0x9b, DW.ref.__gxx_personality_v0
	.cfi_lsda 0x1b, .LLSDA1
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	bl	with_eh
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	with_eh, .-with_eh

	.type	with_eh_b, %function
with_eh_b:
	.cfi_startproc
	.cfi_b_key_frame
	.cfi_personality 0x9b, DW.ref.__gxx_personality_v0
	.cfi_lsda 0x1b, .LLSDA1
	pacibsp
	.cfi_negate_ra_state
	autibsp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	with_eh_b, .-with_eh_b

	.section .gcc_except_table,"a",%progbits
.LLSDA1:
	.byte	0xff, 0xff, 0x1, 0x0

	.hidden	DW.ref.__gxx_personality_v0
	.weak	DW.ref.__gxx_personality_v0
	.section .data.rel.local.DW.ref.__gxx_personality_v0,"awG",%progbits,DW.ref.__gxx_personality_v0,comdat
	.align 3
	.type	DW.ref.__gxx_personality_v0, %object
	.size	DW.ref.__gxx_personality_v0, 8
DW.ref.__gxx_personality_v0:
	.xword	__gxx_personality_v0
