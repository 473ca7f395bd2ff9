# nocfi: no .cfi_startproc at all: no .eh_frame and no .sframe even with
# --gsframe (the .gs.sframe file is therefore absent).
	.text
	.globl	plain
	.type	plain, @function
plain:
	ret
	.size	plain, .-plain
