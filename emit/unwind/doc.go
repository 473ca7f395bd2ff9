// Package unwind walks the stack of a stopped thread with SFrame alone, as
// the kernel's SFrame unwinder and an SFrame-based profiler do: from the
// thread's registers, a way to read its memory and the modules mapped
// into it, it yields one frame after another by looking up each PC in its
// module's .sframe section (emit.Reader) and following the rules of the
// FRE found there: the CFA, then the return address and the frame pointer
// of the caller, read from the stack.
//
// What it knows of each ABI (AMD64, AArch64 in either byte order, s390x):
//
//   - The stack, frame pointer and return-address registers, and where the
//     return address is in the innermost frame before it is saved (LR,
//     r14): an FRE that gives no rule for it (emit.LocSame) means "still in
//     its register", which only the innermost frame, or the frame a signal
//     interrupted, can use.
//   - s390x's CFA convention: the CFA is the caller's stack pointer plus
//     160.
//   - AArch64 signed return addresses (the FRE's mangled-RA bit): the
//     authentication code is cleared with PACMask before the address
//     is used.
//   - Signal frames: a function whose FDE has the signal bit, or a PC at the
//     kernel's (or qemu's) sigreturn trampoline, is a signal frame; the
//     registers of the interrupted frame are read from the kernel's
//     rt_sigframe on the stack (sigframe.go has each ABI's layout), and the
//     walk continues from the exact interrupted PC with every register
//     known.
//   - The end: an FRE without data words (the outermost frame, the return
//     address undefined), a zero return address, or the reason the walk
//     cannot go on (End).
//
// Outside the innermost frame a PC is a return address, so it is looked up
// one byte before, inside the call (a call can be a function's last
// instruction).
//
// Walk allocates nothing: the frames are appended to the caller's slice,
// which can be reused from one walk to the next. A Walker reads the stack
// a 256-byte block at a time (one ReadAt for the words of a frame and its
// neighbours; the blocks are forgotten when a walk ends, as the memory
// may change) and keeps the last answers of emit.Reader.Lookup from walk
// to walk (a profiler meets the same return addresses again and again).
package unwind
