# flex: other x86-64 flex FDE triggers. CFA on rbx; .cfi_register rbp -> rbx;
# .cfi_register rip -> r11; .cfi_offset rip,-16 (RA on stack not at -8);
# .cfi_offset rip,-8 again (back to the fixed RA); CFA on r10 then back to rsp.
	.text
	.globl	cfa_rbx
	.type	cfa_rbx, @function
cfa_rbx:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	movq	%rsp, %rbx
	.cfi_def_cfa_register 3
	nop
	movq	%rbx, %rsp
	.cfi_def_cfa_register 7
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	cfa_rbx, .-cfa_rbx

	.type	reg_rbp, @function
reg_rbp:
	.cfi_startproc
	movq	%rbp, %rbx
	.cfi_register 6, 3
	nop
	movq	%rbx, %rbp
	.cfi_same_value 6
	ret
	.cfi_endproc
	.size	reg_rbp, .-reg_rbp

	.type	reg_rip, @function
reg_rip:
	.cfi_startproc
	popq	%r11
	.cfi_def_cfa_offset 0
	.cfi_register 16, 11
	nop
	pushq	%r11
	.cfi_def_cfa_offset 8
	.cfi_offset 16, -8
	ret
	.cfi_endproc
	.size	reg_rip, .-reg_rip

	.type	rip_slot, @function
rip_slot:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	.cfi_offset 16, -16
	nop
	.cfi_offset 16, -8
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	rip_slot, .-rip_slot

	.type	cfa_r10, @function
cfa_r10:
	.cfi_startproc
	movq	%rsp, %r10
	.cfi_def_cfa 10, 8
	nop
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	cfa_r10, .-cfa_r10

	.type	big_reg, @function
big_reg:
	.cfi_startproc
	nop
	.cfi_def_cfa 40, 8
	nop
	.cfi_register 6, 50
	nop
	.cfi_def_cfa 7, 8
	.cfi_restore 6
	ret
	.cfi_endproc
	.size	big_reg, .-big_reg
