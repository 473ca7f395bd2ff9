package unwind

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/sframe-gen/sframe-gen/emit"
)

// NumRegs is the number of DWARF registers a Regs holds: AMD64's 0-16,
// AArch64's x0-x30 and sp (31), s390x's r0-r15 and f0-f15 (16-31).
const NumRegs = 32

// Regs are the registers of one frame, by DWARF register number, and the
// PC. Known says which are known: all of them in the innermost frame and
// after a signal frame, the stack and frame pointers in the others.
type Regs struct {
	PC    uint64
	R     [NumRegs]uint64
	Known uint32 // bit n: R[n] is known
}

// Set sets register n to v and marks it known; it reports false, changing
// nothing, for n not below NumRegs (as Get does).
func (r *Regs) Set(n uint32, v uint64) bool {
	if n >= NumRegs {
		return false
	}
	r.R[n] = v
	r.Known |= 1 << n
	return true
}

// Get returns register n and whether it is known.
func (r *Regs) Get(n uint32) (uint64, bool) {
	if n >= NumRegs || r.Known&(1<<n) == 0 {
		return 0, false
	}
	return r.R[n], true
}

// Module is one file mapped into the thread's address space.
type Module struct {
	Name       string
	Start, End uint64 // the addresses it is mapped at, End excluded
	// Bias is what was added to the file's addresses when it was loaded
	// (0 for a program linked at a fixed address): SFrame is looked up at
	// PC-Bias.
	Bias uint64
	// SFrame is the module's .sframe section, read at its address in the
	// file (emit.ReaderFromELF); nil when the module has none.
	SFrame *emit.Reader
}

// Frame is one frame of a walk.
type Frame struct {
	// PC is the frame's PC: the interrupted instruction in the innermost
	// frame and in the frame a signal interrupted, a return address in the
	// others (as gdb and eu-stack print them).
	PC uint64
	// SP is the frame's stack pointer as the walk knows it.
	SP uint64
	// Module is the index of the module holding PC in the slice given to
	// New (and Walker.Modules), or -1.
	Module int
	// Exact: PC is an interrupted instruction, not a return address.
	Exact bool
	// Signal: the frame is a signal trampoline; the next frame is the one
	// the signal interrupted.
	Signal bool
}

// Walker walks stacks of one address space. Make it with New, which
// checks what it is given (and nothing changes it after); a Walker is not
// safe for concurrent use (it keeps one read buffer).
type Walker struct {
	abi emit.ABI
	mem io.ReaderAt
	// modules are New's modules in address order, not overlapping;
	// index[i] is the place of modules[i] in the slice given to New.
	modules []Module
	index   []int
	// maxFrames ends a walk that has not ended by itself (a loop in a
	// damaged stack): MaxFrames.
	maxFrames int
	// pacMask is the set of bits of an AArch64 signed return address that
	// hold the authentication code, cleared before the address is used:
	// PACMask.
	pacMask uint64

	big  bool // the ABI is big-endian
	buf  [8]byte
	last int // the module of the last ModuleAt, tried first
	prev int // the one before, tried next (a stack goes back and forth)
	// block holds blockLen bytes of memory read at blockAddr during the
	// current walk (Walk empties it: memory changes between walks): the
	// words of one frame and of its neighbours on the stack are read
	// with one ReadAt.
	block     [memBlock]byte
	blockAddr uint64
	blockLen  int
	// lookups are answers of Lookup kept from walk to walk: a profiler
	// walks the same return addresses again and again.
	lookups *[lookupCache]cachedLookup
}

// memBlock is the bytes Walker reads at once (aligned: a block never
// crosses a page).
const memBlock = 256

// lookupCache is the number of answers of emit.Reader.Lookup a Walker
// keeps (direct-mapped by PC).
const lookupCache = 128

// cachedLookup is one answer of sf.Lookup(pc): the frame, or, when
// Lookup found none (ok false), whether pc is in a signal trampoline's
// function.
type cachedLookup struct {
	sf          *emit.Reader
	pc          uint64
	fr          emit.Frame
	ok, sigFunc bool
}

// MaxFrames is the number of frames after which a walk that has not ended
// by itself (a loop in a damaged stack) ends: EndMaxFrames.
const MaxFrames = 4096

// PACMask is the set of bits of an AArch64 signed return address that a
// Walker takes for the authentication code, cleared before the address is
// used: the bits above a 48-bit user address space (the kernel's default).
const PACMask = ^uint64(1<<48 - 1)

// New returns a Walker for the address space of a thread of abi whose
// memory mem reads (at virtual addresses) and into which mods are mapped,
// in any order. It reports modules that overlap or are empty. Frames name
// their module by its index in mods.
func New(abi emit.ABI, mem io.ReaderAt, mods []Module) (*Walker, error) {
	switch abi {
	case emit.ABIAMD64LittleEndian, emit.ABIAArch64LittleEndian, emit.ABIAArch64BigEndian, emit.ABIS390XBigEndian:
	default:
		return nil, fmt.Errorf("unwind: unknown ABI %d", abi)
	}
	index := make([]int, len(mods))
	for i := range index {
		index[i] = i
	}
	slices.SortStableFunc(index, func(a, b int) int { return cmp.Compare(mods[a].Start, mods[b].Start) })
	ms := make([]Module, len(mods))
	for i, j := range index {
		ms[i] = mods[j]
	}
	for i := range ms {
		if ms[i].End <= ms[i].Start {
			return nil, fmt.Errorf("unwind: module %s: empty range %#x-%#x", ms[i].Name, ms[i].Start, ms[i].End)
		}
		if i > 0 && ms[i].Start < ms[i-1].End {
			return nil, fmt.Errorf("unwind: modules %s and %s overlap at %#x", ms[i-1].Name, ms[i].Name, ms[i].Start)
		}
	}
	return &Walker{abi: abi, mem: mem, modules: ms, index: index, maxFrames: MaxFrames, pacMask: PACMask, big: abi.ByteOrder() == binary.BigEndian,
		lookups: new([lookupCache]cachedLookup)}, nil
}

// ABI is the ABI of the address space the Walker walks.
func (w *Walker) ABI() emit.ABI { return w.abi }

// Mem is what reads the address space's memory.
func (w *Walker) Mem() io.ReaderAt { return w.mem }

// Modules returns a copy of the modules given to New, in their order
// (Frame.Module's index).
func (w *Walker) Modules() []Module {
	out := make([]Module, len(w.modules))
	for i, j := range w.index {
		out[j] = w.modules[i]
	}
	return out
}

// ModuleAt returns the index of the module holding addr in the modules
// given to New, or -1.
func (w *Walker) ModuleAt(addr uint64) int {
	if i := w.moduleAt(addr); i >= 0 {
		return w.index[i]
	}
	return -1
}

// moduleAt returns the index of the module holding addr in w.modules (in
// address order), or -1.
func (w *Walker) moduleAt(addr uint64) int {
	if w.last < len(w.modules) && addr >= w.modules[w.last].Start && addr < w.modules[w.last].End {
		return w.last
	}
	if w.prev < len(w.modules) && addr >= w.modules[w.prev].Start && addr < w.modules[w.prev].End {
		w.last, w.prev = w.prev, w.last
		return w.last
	}
	// The first module starting above addr.
	i, n := 0, len(w.modules)
	for n > 0 {
		half := n >> 1
		if w.modules[i+half].Start <= addr {
			i += half + 1
			n -= half + 1
		} else {
			n = half
		}
	}
	if i == 0 || addr >= w.modules[i-1].End {
		return -1
	}
	w.last, w.prev = i-1, w.last
	return i - 1
}

// word reads the 8-byte word at addr in the ABI's byte order: from the
// block read last in this walk, or from a new block holding it, or, where
// its block cannot be read whole, alone.
func (w *Walker) word(addr uint64) (uint64, bool) {
	if addr > 1<<63 {
		return 0, false
	}
	if off := addr - w.blockAddr; addr >= w.blockAddr && off+8 <= uint64(w.blockLen) {
		return w.uint64(w.block[off:]), true
	}
	start := addr &^ (memBlock - 1)
	if n, _ := w.mem.ReadAt(w.block[:], int64(start)); n >= int(addr-start)+8 {
		w.blockAddr, w.blockLen = start, n
		return w.uint64(w.block[addr-start:]), true
	}
	w.blockLen = 0
	n, err := w.mem.ReadAt(w.buf[:], int64(addr))
	if n < len(w.buf) && err != nil {
		return 0, false
	}
	return w.uint64(w.buf[:]), true
}

// uint64 decodes a word in the ABI's byte order.
func (w *Walker) uint64(b []byte) uint64 {
	if w.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// raReg returns the DWARF number of the register that holds the return
// address at a function's entry: LR on AArch64, r14 on s390x, none (the
// stack) on AMD64.
func raReg(abi emit.ABI) (uint32, bool) {
	switch abi {
	case emit.ABIAArch64LittleEndian, emit.ABIAArch64BigEndian:
		return 30, true
	case emit.ABIS390XBigEndian:
		return 14, true
	}
	return 0, false
}

// spBias is what is added to the CFA to get the caller's stack pointer:
// s390x's CFA is 160 bytes above it (the register save area the ABI
// reserves), the others' is the stack pointer itself.
func spBias(abi emit.ABI) int64 {
	if abi == emit.ABIS390XBigEndian {
		return -160
	}
	return 0
}
