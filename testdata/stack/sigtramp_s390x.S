/* sig_restorer: the handler's return address (SA_RESTORER), rt_sigreturn
   after an instruction that does nothing, with CFI that describes the
   kernel's rt_sigframe at r15 (160 bytes, svc_insn, siginfo at 168,
   ucontext at 296 with _sigregs 40 bytes in: psw mask, psw address,
   r0-r15). gdb then unwinds it with this CFI instead of recognizing svc
   173 at the PC, and sframe-gen keeps it as a signal FDE. */
	.text
	.cfi_startproc
	.cfi_signal_frame
	.cfi_return_column 65
	.cfi_def_cfa %r15, 0
	.irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	.cfi_offset \n, 352 + 8 * \n
	.endr
	.cfi_offset 65, 344
	nopr	%r7	/* the FDE starts before: callers look up PC-1 */
	.globl	sig_restorer
	.type	sig_restorer, @function
sig_restorer:
	lgr	%r1, %r1
	svc	173	/* __NR_rt_sigreturn */
	.cfi_endproc
	.size	sig_restorer, .-sig_restorer
	.section .note.GNU-stack,"",@progbits
