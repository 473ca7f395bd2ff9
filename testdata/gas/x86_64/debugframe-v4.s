# debugframe-v4: .debug_frame only, CIE version 4 (--gdwarf-cie-version=4:
# CIE has address_size and segment_selector_size fields).
# as-flags: --gdwarf-cie-version=4
	.cfi_sections .debug_frame
	.text
	.globl	v4
	.type	v4, @function
v4:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset 3, -16
	subq	$512, %rsp
	.cfi_def_cfa_offset 528
	addq	$512, %rsp
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	v4, .-v4
