package verify

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/sframe-gen/sframe-gen/emit"
)

// The CFA expression GNU ld writes for an x86-64 lazy .plt,
//
//	DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
//	DW_OP_litN; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
//
// says the CFA is rsp+16 from offset N of each 16-byte entry on (the entry's
// push has run), rsp+8 before. The entries of the PLT with IBT and BND
// (endbr64; push $i; bnd jmp PLT0; nop: ld 2.29 to 2.3x with -z bndplt and
// IBT) end their push at offset 9, but ld's expression for them says
// DW_OP_lit10: at offset 9, the start of the bnd jmp and the one address of
// that instruction where execution can stop, the expression gives rsp+8
// while the push has run. A CFA changes only between instructions, so an
// expression whose value changes inside the instruction that follows the
// entry's push is read at that instruction's start with the value it gives
// over the rest of the instruction: what the code does. SFrame (GNU ld's
// own, bfd/elf64-x86-64.c elf_x86_64_sframe_ibt_pltn_fre2, and sframe-gen's)
// says rsp+16 from offset 9.

// pltEntrySize is the size of an x86-64 lazy PLT entry, the block the
// expression's DW_OP_lit15; DW_OP_and reads the offset in.
const pltEntrySize = 16

// x86Instr is an instruction GNU ld writes into x86-64 PLT entries: the
// bytes it starts with and its length; indexPush marks the lazy entry's
// push of its relocation index, the push ld's expression describes.
type x86Instr struct {
	prefix    []byte
	size      int
	indexPush bool
}

// pltInstrs are the instructions of ld's x86-64 PLT templates
// (bfd/elf64-x86-64.c): enough to find instruction boundaries in an entry.
var pltInstrs = []x86Instr{
	{prefix: []byte{0xf3, 0x0f, 0x1e, 0xfa}, size: 4},              // endbr64
	{prefix: []byte{0xff, 0x35}, size: 6},                          // push disp32(%rip)
	{prefix: []byte{0x68}, size: 5, indexPush: true},               // push $imm32
	{prefix: []byte{0xff, 0x25}, size: 6},                          // jmp *disp32(%rip)
	{prefix: []byte{0xf2, 0xff, 0x25}, size: 7},                    // bnd jmp *disp32(%rip)
	{prefix: []byte{0xe9}, size: 5},                                // jmp rel32
	{prefix: []byte{0xf2, 0xe9}, size: 6},                          // bnd jmp rel32
	{prefix: []byte{0x90}, size: 1},                                // nop
	{prefix: []byte{0xcc}, size: 1},                                // int3
	{prefix: []byte{0x66, 0x90}, size: 2},                          // xchg %ax,%ax
	{prefix: []byte{0x0f, 0x1f, 0x00}, size: 3},                    // nopl (%rax)
	{prefix: []byte{0x0f, 0x1f, 0x40, 0x00}, size: 4},              // nopl 0(%rax)
	{prefix: []byte{0x0f, 0x1f, 0x44, 0x00, 0x00}, size: 5},        // nopl 0(%rax,%rax)
	{prefix: []byte{0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, size: 6},  // nopw 0(%rax,%rax)
	{prefix: []byte{0x0f, 0x1f, 0x80}, size: 7},                    // nopl disp32(%rax)
	{prefix: []byte{0x0f, 0x1f, 0x84, 0x00}, size: 8},              // nopl disp32(%rax,%rax)
	{prefix: []byte{0x66, 0x0f, 0x1f, 0x84, 0x00}, size: 9},        // nopw disp32(%rax,%rax)
	{prefix: []byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00}, size: 10}, // nopw %cs:disp32(%rax,%rax)
}

// decodePLTInstr returns the instruction code starts with, if it is one of
// pltInstrs.
func decodePLTInstr(code []byte) (x86Instr, bool) {
	for _, in := range pltInstrs {
		if bytes.HasPrefix(code, in.prefix) && len(code) >= in.size {
			return in, true
		}
	}
	return x86Instr{}, false
}

// pltCode holds the bytes of a linked file's .plt, read once, and for
// AArch64 the frame its code gives at each instruction.
type pltCode struct {
	read bool
	addr uint64
	data []byte
	a64  []a64State
}

// afterPush reports whether pc starts the instruction that follows the
// push $index of its x86-64 .plt entry, and returns that instruction's
// end. The TLSDESC entry ld puts last ([endbr64;] push GOT+8(%rip); jmp
// *GOT(%rip)) is left out: in a lazy .plt without IBT, the expression ld
// writes over the whole .plt does not describe its push, nor does ld's
// SFrame (both sp+8 at its jmp, where the push has run); both are
// compared as they are.
func (c *checker) afterPush(pc uint64) (end uint64, ok bool) {
	if c.rel || c.s.Header.ABI != emit.ABIAMD64LittleEndian {
		return 0, false
	}
	p := &c.plt
	if !p.read {
		p.read = true
		if s := c.f.Section(".plt"); s != nil && s.Type == elf.SHT_PROGBITS && s.Size <= maxPLTBytes {
			if b, err := s.Data(); err == nil {
				p.addr, p.data = s.Addr, b
			}
		}
	}
	if pc < p.addr || pc-p.addr >= uint64(len(p.data)) {
		return 0, false
	}
	entry := p.addr + (pc-p.addr)/pltEntrySize*pltEntrySize
	code := p.data[entry-p.addr : min(entry-p.addr+pltEntrySize, uint64(len(p.data)))]
	at, pushed := entry, false
	for at < pc {
		in, ok := decodePLTInstr(code[at-entry:])
		if !ok {
			return 0, false
		}
		pushed = in.indexPush
		at += uint64(in.size)
	}
	if at != pc || !pushed {
		return 0, false
	}
	in, ok := decodePLTInstr(code[at-entry:])
	if !ok {
		return 0, false
	}
	return pc + uint64(in.size), true
}

// maxPLTBytes bounds the .plt read for afterPush.
const maxPLTBytes = 1 << 24

// pltBoundaryNote is the note for addresses where the PLT's CFA expression
// is read at the instruction boundary.
const pltBoundaryNote = "CFA: the PLT's CFA expression changes the CFA inside the instruction after the entry's push; read at that instruction's start, where the push has run (GNU ld's IBT+BND PLT expression says offset 10, the push ends at 9)"

// cfaAtBoundary returns the CFA the PC-dependent expression of the CFI
// gives at pc, read at the instruction boundary when pc starts the
// instruction after a .plt entry's push and the expression changes its
// value inside that instruction (then corrected is set).
func (c *checker) cfaAtBoundary(side *cfiSide, expr []byte, pc uint64) (l loc, corrected bool) {
	l = side.cfaAt(expr, pc)
	end, ok := c.afterPush(pc)
	if !ok || end-pc < 2 {
		return l, false
	}
	inside := side.cfaAt(expr, pc+1)
	for a := pc + 2; a < end; a++ {
		if !side.cfaAt(expr, a).equal(inside) {
			return l, false // not one value over the instruction: no reading is right
		}
	}
	if inside.equal(l) {
		return l, false
	}
	return inside, true
}

// AArch64 PLT stubs have no CFI (GNU ld writes none), so the SFrame FDEs
// sframe-gen writes for them are proven against the code itself: the .plt
// is read one instruction at a time from its start, each stub entered with
// the state a call leaves (CFA = sp+0, the return address in x30, x29 the
// caller's), and the effect of each instruction on sp, x29 and x30
// followed. Instructions are always little-endian on AArch64, in
// big-endian files too. A stub ends at its br; the nops after it are
// padding no path reaches, and the next other instruction starts a stub.
// An instruction this reading does not know, or one that writes x29, x30
// or sp other than by a known amount, leaves the rest of its stub
// unknown: SFrame that describes it is reported, not taken on trust.

// a64Kind says what is known at one instruction of the .plt.
type a64Kind uint8

const (
	a64Known       a64Kind = iota // the state below holds
	a64Unreachable                // padding after a stub's branch
	a64Unknown                    // after an instruction the reading does not follow
)

// a64State is the frame at one instruction of an AArch64 .plt: CFA =
// sp+cfa; the RA (x30) and FP (x29) at CFA+raOff / CFA+fpOff once saved,
// else still in their registers.
type a64State struct {
	kind             a64Kind
	cfa              int64
	raSaved, fpSaved bool
	raOff, fpOff     int64
	word             uint32 // the instruction the state became unknown at
}

// frame is the state as verify's rules.
func (s *a64State) frame() frame {
	f := frame{cfa: loc{kind: locRule, regP: true, reg: a64SP, off: s.cfa}}
	if s.raSaved {
		f.ra = loc{kind: locRule, off: s.raOff, deref: true}
	}
	if s.fpSaved {
		f.fp = loc{kind: locRule, off: s.fpOff, deref: true}
	}
	return f
}

// DWARF numbers of the AArch64 registers the reading tracks (31 is sp as
// a base register, xzr as a destination of adrp and ldr).
const (
	a64FP = 29
	a64LR = 30
	a64SP = 31
)

// a64Hints are the hint instructions ld's stubs use that touch none of sp,
// x29, x30: nop, bti (c, j, jc, none), and the *1716 forms of pointer
// authentication, which sign or authenticate x17 with x16.
var a64Hints = map[uint32]bool{
	0xd503201f: true, // nop
	0xd503241f: true, // bti
	0xd503245f: true, // bti c
	0xd503249f: true, // bti j
	0xd50324df: true, // bti jc
	0xd503211f: true, // pacia1716
	0xd503215f: true, // pacib1716
	0xd503219f: true, // autia1716
	0xd50321df: true, // autib1716
}

// a64Step applies instruction w to s; it returns true for a branch (br
// Xn), which ends the stub.
func a64Step(s *a64State, w uint32) (branch bool) {
	unknown := func() { s.kind, s.word = a64Unknown, w }
	writes := func(rd uint32) {
		if rd == a64FP || rd == a64LR {
			unknown()
		}
	}
	rd, rn := w&31, w>>5&31
	switch {
	case a64Hints[w]:
	case w&0xfffffc1f == 0xd61f0000: // br Xn
		return true
	case w&0x9f000000 == 0x90000000: // adrp Xd
		writes(rd)
	case w&0xffc00000 == 0xf9400000 || w&0xffc00000 == 0xb9400000: // ldr Xt/Wt, [Xn, #imm]
		writes(rd)
	case w&0xff800000 == 0x91000000 || w&0xff800000 == 0xd1000000: // add/sub Xd, Xn, #imm
		imm := int64(w >> 10 & 0xfff)
		if w>>22&1 != 0 {
			imm <<= 12
		}
		if w&0x40000000 != 0 {
			imm = -imm
		}
		switch {
		case rd != a64SP:
			writes(rd)
		case rn == a64SP:
			s.cfa -= imm
		default:
			unknown()
		}
	case w&0xffc00000 == 0xa9800000 && rn == a64SP: // stp Xt1, Xt2, [sp, #imm]!
		imm := int64(int8(w>>15&0x7f<<1)>>1) * 8
		s.cfa -= imm
		save := func(r uint32, off int64) {
			switch r {
			case a64LR:
				s.raSaved, s.raOff = true, off
			case a64FP:
				s.fpSaved, s.fpOff = true, off
			}
		}
		save(rd, -s.cfa)
		save(w>>10&31, -s.cfa+8)
	default:
		unknown()
	}
	return false
}

// readA64PLT reads the .plt into one state per instruction.
func readA64PLT(code []byte) []a64State {
	states := make([]a64State, len(code)/4)
	s := a64State{}
	afterBranch := false
	for i := range states {
		w := binary.LittleEndian.Uint32(code[4*i:])
		if afterBranch {
			if w == 0xd503201f {
				states[i] = a64State{kind: a64Unreachable}
				continue
			}
			s, afterBranch = a64State{}, false
		}
		states[i] = s
		if s.kind == a64Unknown {
			if w&0xfffffc1f == 0xd61f0000 {
				afterBranch = true
			}
			continue
		}
		afterBranch = a64Step(&s, w)
	}
	return states
}

// a64PLTState returns the state at pc if pc is an instruction of the .plt
// of an AArch64 linked file.
func (c *checker) a64PLTState(pc uint64) (a64State, bool) {
	if c.rel || !c.s.Header.ABI.IsAArch64() {
		return a64State{}, false
	}
	p := &c.plt
	if !p.read {
		p.read = true
		if s := c.f.Section(".plt"); s != nil && s.Type == elf.SHT_PROGBITS && s.Size <= maxPLTBytes {
			if b, err := s.Data(); err == nil {
				p.addr, p.a64 = s.Addr, readA64PLT(b)
			}
		}
	}
	if pc < p.addr || (pc-p.addr)/4 >= uint64(len(p.a64)) {
		return a64State{}, false
	}
	return p.a64[(pc-p.addr)/4], true
}

// a64PLTNote is the note for .plt addresses proven against the code.
const a64PLTNote = "no CFI describes AArch64 PLT stubs: SFrame compared with what the .plt instructions do"

// compareA64PLT compares SFrame's frame sf over [lo, hi) of an AArch64
// .plt with the frame the code gives at each instruction.
func (c *checker) compareA64PLT(w *walker, sf frame, sfUndefRA bool, lo, hi uint64) {
	for pc := lo; pc < hi; {
		next := min(pc&^3+4, hi)
		st, ok := c.a64PLTState(pc)
		switch {
		case !ok:
			w.add(KindCoverage, "SFrame describes these PLT addresses, no CFI FDE does, and they are past the .plt's last instruction", pc, next)
		case pc&3 != 0:
			w.add(KindMismatch, "an FRE of a .plt stub starts inside an instruction", pc, next)
		case st.kind == a64Unreachable:
			w.add(KindNote, "padding after a .plt stub's branch, which no path reaches: not compared", pc, next)
		case st.kind == a64Unknown:
			w.add(KindCoverage, fmt.Sprintf("SFrame describes .plt code after an instruction (%08x) verify does not follow: not proven", st.word), pc, next)
		default:
			cf := st.frame()
			w.add(KindNote, a64PLTNote, pc, next)
			w.compareFrames(c.s.Header.ABI, sf, sfUndefRA, &cf, pc, next)
		}
		pc = next
	}
}
