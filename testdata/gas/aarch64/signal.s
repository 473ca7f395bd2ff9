# signal: .cfi_signal_frame on aarch64 (attr "S"), and a signal frame whose
# translation fails (non-SP/FP CFA register x0: no flex on aarch64) so gas
# keeps it with 0 FREs.
	.text
	.globl	sig_ok
	.type	sig_ok, %function
sig_ok:
	.cfi_startproc
	.cfi_signal_frame
	nop
	.cfi_def_cfa 31, 4704
	.cfi_offset 29, -4456
	.cfi_offset 30, -4448
	nop
	ret
	.cfi_endproc
	.size	sig_ok, .-sig_ok

	.type	sig_fail, %function
sig_fail:
	.cfi_startproc
	.cfi_signal_frame
	nop
	.cfi_def_cfa 0, 16
	nop
	ret
	.cfi_endproc
	.size	sig_fail, .-sig_fail
