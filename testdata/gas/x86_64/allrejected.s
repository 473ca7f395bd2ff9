# allrejected: every function is skipped, so gas emits a 28-byte header-only
# .sframe (0 FDEs) and an empty .rela.sframe is absent.
	.text
	.type	a1, @function
a1:
	.cfi_startproc
	.cfi_return_column 0
	ret
	.cfi_endproc
	.size	a1, .-a1

	.type	a2, @function
a2:
	.cfi_startproc
	nop
	.cfi_undefined 7
	ret
	.cfi_endproc
	.size	a2, .-a2
