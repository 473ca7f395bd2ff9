# signal: .cfi_signal_frame (attr "S"), and a signal frame whose translation
# fails (.cfi_window_save is rejected on s390x) so gas keeps 0 FREs.
	.text
	.type	sig_ok, @function
sig_ok:
	.cfi_startproc
	.cfi_signal_frame
	nopr
	.cfi_offset 14, -48
	br	%r14
	.cfi_endproc
	.size	sig_ok, .-sig_ok

	.type	sig_fail, @function
sig_fail:
	.cfi_startproc
	.cfi_signal_frame
	nopr
	.cfi_window_save
	br	%r14
	.cfi_endproc
	.size	sig_fail, .-sig_fail
