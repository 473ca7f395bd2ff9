/* sig_restorer: the handler's return address (SA_RESTORER), rt_sigreturn
   with CFI that describes the kernel's rt_sigframe at SP (siginfo, then
   ucontext with uc_mcontext at 176: fault_address, x0-x30, sp, pc), as
   the kernel's vDSO has it. The instructions differ from the kernel's
   trampoline on purpose, so gdb unwinds it with this CFI (and sframe-gen
   keeps it as a signal FDE) instead of recognizing its bytes. */
	.text
	.cfi_startproc
	.cfi_signal_frame
	.cfi_return_column 32
	.cfi_def_cfa sp, 0
	.irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32
	.cfi_offset \n, 312 + 8 * \n
	.endr
	nop	/* the FDE starts one byte before: callers look up PC-1 */
	.globl	sig_restorer
	.type	sig_restorer, %function
sig_restorer:
	mov	x8, #138
	add	x8, x8, #1	/* __NR_rt_sigreturn */
	svc	#0
	.cfi_endproc
	.size	sig_restorer, .-sig_restorer
	.section .note.GNU-stack,"",%progbits
