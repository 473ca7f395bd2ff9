# personality: .cfi_personality and .cfi_lsda (CIE augmentation "zPLR", as for
# C++ with exceptions: indirect pcrel sdata4 personality, pcrel sdata4 LSDA),
# and a second function with only a personality ("zPR"). The SFrame output
# ignores both; the CFI reader must parse the augmentation data.
	.text
	.globl	with_eh
	.type	with_eh, @function
with_eh:
	.cfi_startproc
	.cfi_personality 0x9b, DW.ref.__gxx_personality_v0
	.cfi_lsda 0x1b, .LLSDA1
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset 3, -16
	call	with_eh
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	with_eh, .-with_eh

	.type	pers_only, @function
pers_only:
	.cfi_startproc
	.cfi_personality 0x3, __gxx_personality_v0
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	pers_only, .-pers_only

	.section .gcc_except_table,"a",@progbits
.LLSDA1:
	.byte	0xff, 0xff, 0x1, 0x0

	.hidden	DW.ref.__gxx_personality_v0
	.weak	DW.ref.__gxx_personality_v0
	.section .data.rel.local.DW.ref.__gxx_personality_v0,"awG",@progbits,DW.ref.__gxx_personality_v0,comdat
	.align 8
	.type	DW.ref.__gxx_personality_v0, @object
	.size	DW.ref.__gxx_personality_v0, 8
DW.ref.__gxx_personality_v0:
	.quad	__gxx_personality_v0
