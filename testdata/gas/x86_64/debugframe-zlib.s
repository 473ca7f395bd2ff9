# debugframe-zlib: .debug_frame only, compressed (SHF_COMPRESSED, ELFCOMPRESS_ZLIB)
# by --compress-debug-sections=zlib-gabi; 24 small functions so that compression
# pays off (gas keeps a section uncompressed when that is smaller).
# as-flags: --compress-debug-sections=zlib-gabi
	.cfi_sections .debug_frame
	.text
	.rept	24
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register 6
	popq	%rbp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.endr
