package verify

import (
	"bytes"
	"debug/elf"

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

// pltCode holds the bytes of a linked file's .plt, read once.
type pltCode struct {
	read bool
	addr uint64
	data []byte
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
