package unwind

import (
	"bytes"

	"github.com/sframe-gen/sframe-gen/emit"
)

// The sigreturn trampolines: the instructions a signal handler returns to
// (the kernel's, glibc's __restore_rt, qemu-user's), recognized at a PC
// that no SFrame FDE covers, as gdb recognizes them.
var (
	// mov $15, %rax; syscall (rt_sigreturn).
	amd64Sigreturn = []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}
	// mov x8, #139; svc #0 (rt_sigreturn; instructions are little-endian
	// in either data byte order).
	aarch64Sigreturn = []byte{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}
	// svc 173 (rt_sigreturn) and svc 119 (sigreturn).
	s390xRTSigreturn = []byte{0x0a, 0xad}
	s390xSigreturn   = []byte{0x0a, 0x77}
)

// isSigreturn reports whether the instructions at pc are the ABI's
// sigreturn trampoline.
func (w *Walker) isSigreturn(pc uint64) bool {
	var code [9]byte
	var want []byte
	if pc > 1<<63 {
		return false
	}
	switch w.abi {
	case emit.ABIAMD64LittleEndian:
		want = amd64Sigreturn
	case emit.ABIS390XBigEndian:
		n, _ := w.mem.ReadAt(code[:2], int64(pc))
		return n == 2 && (bytes.Equal(code[:2], s390xRTSigreturn) || bytes.Equal(code[:2], s390xSigreturn))
	default:
		want = aarch64Sigreturn
	}
	n, _ := w.mem.ReadAt(code[:len(want)], int64(pc))
	return n == len(want) && bytes.Equal(code[:n], want)
}

// The kernel's signal frames (arch/*/kernel/signal.c; qemu-user's
// linux-user/*/signal.c writes the same): where the interrupted registers
// are, from the stack pointer at the trampoline.
const (
	// AMD64: SP is &rt_sigframe.uc (the handler's return popped
	// pretcode); uc_mcontext (struct sigcontext) is 40 bytes in.
	amd64Mcontext = 40
	amd64RSP      = 120 // within sigcontext
	amd64RIP      = 128
	// AArch64: SP is &rt_sigframe: siginfo (128), then ucontext whose
	// uc_mcontext is at 176; sigcontext starts with fault_address, then
	// regs[31], sp, pc.
	aarch64Regs = 128 + 176 + 8
	// s390x: SP is &rt_sigframe: 160 bytes of callee stack, svc_insn,
	// siginfo at 168 (128 bytes), ucontext at 296 whose uc_mcontext
	// (_sigregs: psw mask, psw addr, gprs) is 40 bytes in. The old
	// sigframe (svc 119) has a sigcontext at 160 whose second word
	// points at its _sigregs.
	s390xRTSigregs   = 296 + 40
	s390xSigcontext  = 160
	s390xSigregsGPRs = 16
	s390xSigregsPSWA = 8
)

// amd64SigOffset is the offset in struct sigcontext of each DWARF register
// 0-15 (rax rdx rcx rbx rsi rdi rbp rsp r8-r15).
var amd64SigOffset = [16]uint64{104, 96, 112, 88, 72, 64, 80, amd64RSP, 0, 8, 16, 24, 32, 40, 48, 56}

// sigframe reads the registers of the frame a signal interrupted from the
// signal frame at cur's stack pointer: every general register is known,
// and the PC is the interrupted instruction.
func (w *Walker) sigframe(cur, next *Regs) (End, bool) {
	next.Known = 0
	sp, ok := cur.Get(w.abi.StackPointer())
	if !ok {
		return End{Reason: EndRegister, Reg: w.abi.StackPointer()}, false
	}
	read := func(addr uint64) (uint64, bool) { return w.word(addr) }
	var pcAt uint64
	switch w.abi {
	case emit.ABIAMD64LittleEndian:
		base := sp + amd64Mcontext
		for r, off := range amd64SigOffset {
			v, ok := read(base + off)
			if !ok {
				return End{Reason: EndMemory, Addr: base + off}, false
			}
			next.Set(uint32(r), v)
		}
		pcAt = base + amd64RIP
	case emit.ABIS390XBigEndian:
		sigregs := sp + s390xRTSigregs
		if n, _ := w.mem.ReadAt(w.buf[:2], int64(cur.PC)); n == 2 && bytes.Equal(w.buf[:2], s390xSigreturn) {
			p, ok := read(sp + s390xSigcontext + 8)
			if !ok {
				return End{Reason: EndMemory, Addr: sp + s390xSigcontext + 8}, false
			}
			sigregs = p
		}
		for r := range uint64(16) {
			addr := sigregs + s390xSigregsGPRs + 8*r
			v, ok := read(addr)
			if !ok {
				return End{Reason: EndMemory, Addr: addr}, false
			}
			next.Set(uint32(r), v)
		}
		pcAt = sigregs + s390xSigregsPSWA
	default:
		for r := range uint64(32) { // x0-x30, sp
			addr := sp + aarch64Regs + 8*r
			v, ok := read(addr)
			if !ok {
				return End{Reason: EndMemory, Addr: addr}, false
			}
			next.Set(uint32(r), v)
		}
		pcAt = sp + aarch64Regs + 8*32
	}
	pc, ok := read(pcAt)
	if !ok {
		return End{Reason: EndMemory, Addr: pcAt}, false
	}
	next.PC = pc
	return End{}, true
}
