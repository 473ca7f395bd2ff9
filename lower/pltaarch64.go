package lower

import (
	"debug/elf"
	"encoding/binary"

	"github.com/sframe-gen/sframe-gen/emit"
)

// AArch64 PLT FDEs. GNU ld writes neither SFrame nor .eh_frame for an
// AArch64 .plt, so a stack walker that stops in a PLT stub has nothing to
// go on. SFrame can say what these stubs do, and in the default mode
// LowerFile writes FDEs for the .plt code it recognizes, instruction by
// instruction, as one of ld's templates (bfd/elfnn-aarch64.c); in GasCompat
// mode it writes none, as ld. Instructions are always little-endian on
// AArch64, also in big-endian (BE8) files.
//
// The templates, with what the stack looks like on each instruction:
//
//	PLT0 (32 bytes)   [bti c;] stp x16, x30, [sp, #-16]!; adrp x16; ldr x17, [x16, #lo];
//	                  add x16, x16, #lo; br x17; nop...
//	                  CFA = sp+0, RA in x30 up to the stp; then CFA = sp+16, RA at CFA-8
//	PLTn (16 or 24)   [bti c;] adrp x16; ldr x17, [x16, #lo]; add x16, x16, #lo (or nop, for
//	                  lo 0); [autia1716;] br x17[; nop]
//	                  CFA = sp+0, RA in x30 throughout
//	TLSDESC (32)      [bti c;] stp x2, x3, [sp, #-16]!; adrp x2; adrp x3; ldr x2, [x2, #lo];
//	                  add x3, x3, #lo; br x2; nop...
//	                  CFA = sp+0 up to the stp, then sp+16; RA in x30 throughout
//
// The PLTn entries, which all say the same, get one PCMASK FDE whose block
// is the entry, as ld's x86-64 and s390x PLT FDEs: a walker finds the FRE
// without a table per entry. (Their one FRE at offset 0 would read the same
// through a PCINC FDE; PCMASK states that the FDE covers repeated stubs.)

// a64Insn matches one instruction: (word & mask) == value.
type a64Insn struct{ mask, value uint32 }

// a64Slot is one instruction of a template: any of its forms.
type a64Slot []a64Insn

var (
	a64BTIC      = a64Slot{{0xffffffff, 0xd503245f}}
	a64NOP       = a64Slot{{0xffffffff, 0xd503201f}}
	a64Autia1716 = a64Slot{{0xffffffff, 0xd503219f}}
	a64StpX16X30 = a64Slot{{0xffffffff, 0xa9bf7bf0}} // stp x16, x30, [sp, #-16]!
	a64AdrpX16   = a64Slot{{0x9f00001f, 0x90000010}}
	a64LdrX17    = a64Slot{{0xffc003ff, 0xf9400211}} // ldr x17, [x16, #imm]
	a64AddX16    = a64Slot{{0xffc003ff, 0x91000210}, {0xffffffff, 0xd503201f}}
	a64BrX17     = a64Slot{{0xffffffff, 0xd61f0220}}
	a64StpX2X3   = a64Slot{{0xffffffff, 0xa9bf0fe2}} // stp x2, x3, [sp, #-16]!
	a64AdrpX2    = a64Slot{{0x9f00001f, 0x90000002}}
	a64AdrpX3    = a64Slot{{0x9f00001f, 0x90000003}}
	a64LdrX2     = a64Slot{{0xffc003ff, 0xf9400042}} // ldr x2, [x2, #imm]
	a64AddX3     = a64Slot{{0xffc003ff, 0x91000063}} // add x3, x3, #imm
	a64BrX2      = a64Slot{{0xffffffff, 0xd61f0040}}
)

// a64PLTTemplate is one PLT stub ld writes: its instructions and the FREs
// that describe them.
type a64PLTTemplate struct {
	name  string
	slots []a64Slot
	fres  []pltFRE
}

func (tp *a64PLTTemplate) size() uint64 { return 4 * uint64(len(tp.slots)) }

// matches reports whether code starts with the template's instructions.
func (tp *a64PLTTemplate) matches(code []byte) bool {
	if uint64(len(code)) < tp.size() {
		return false
	}
	for i, slot := range tp.slots {
		w := binary.LittleEndian.Uint32(code[4*i:])
		if !slot.matches(w) {
			return false
		}
	}
	return true
}

func (s a64Slot) matches(w uint32) bool {
	for _, in := range s {
		if w&in.mask == in.value {
			return true
		}
	}
	return false
}

// FREs of the stubs: CFA = sp+N; RA at CFA+ra when ra is not 0, else
// still in x30.
var (
	a64PLT0FREs    = []pltFRE{{start: 0, cfa: 0}, {start: 4, cfa: 16, ra: -8}}
	a64PLT0BTIFREs = []pltFRE{{start: 0, cfa: 0}, {start: 8, cfa: 16, ra: -8}}
	a64PLTnFREs    = []pltFRE{{start: 0, cfa: 0}}
	a64TLSDescFREs = []pltFRE{{start: 0, cfa: 0}, {start: 4, cfa: 16}}
	a64TLSDescBTI  = []pltFRE{{start: 0, cfa: 0}, {start: 8, cfa: 16}}
)

var a64PLT0Templates = []a64PLTTemplate{
	{"PLT0", []a64Slot{a64StpX16X30, a64AdrpX16, a64LdrX17, a64AddX16, a64BrX17, a64NOP, a64NOP, a64NOP}, a64PLT0FREs},
	{"PLT0 with BTI", []a64Slot{a64BTIC, a64StpX16X30, a64AdrpX16, a64LdrX17, a64AddX16, a64BrX17, a64NOP, a64NOP}, a64PLT0BTIFREs},
}

var a64PLTnTemplates = []a64PLTTemplate{
	{"PLTn", []a64Slot{a64AdrpX16, a64LdrX17, a64AddX16, a64BrX17}, a64PLTnFREs},
	{"PLTn with BTI", []a64Slot{a64BTIC, a64AdrpX16, a64LdrX17, a64AddX16, a64BrX17, a64NOP}, a64PLTnFREs},
	{"PLTn with PAC", []a64Slot{a64AdrpX16, a64LdrX17, a64AddX16, a64Autia1716, a64BrX17, a64NOP}, a64PLTnFREs},
	{"PLTn with BTI and PAC", []a64Slot{a64BTIC, a64AdrpX16, a64LdrX17, a64AddX16, a64Autia1716, a64BrX17}, a64PLTnFREs},
}

var a64TLSDescTemplates = []a64PLTTemplate{
	{"TLSDESC", []a64Slot{a64StpX2X3, a64AdrpX2, a64AdrpX3, a64LdrX2, a64AddX3, a64BrX2, a64NOP, a64NOP}, a64TLSDescFREs},
	{"TLSDESC with BTI", []a64Slot{a64BTIC, a64StpX2X3, a64AdrpX2, a64AdrpX3, a64LdrX2, a64AddX3, a64BrX2, a64NOP}, a64TLSDescBTI},
}

// maxA64PLTBytes bounds the .plt read (a million entries and more).
const maxA64PLTBytes = 1 << 24

// aarch64PLT returns the FDEs for the stubs of an AArch64 .plt that are
// ld's templates, in address order, and the .plt as a PLT section (nil if
// there is none or no stub is recognized). Recognition stops at the first
// bytes that are none of the templates: the code after them gets no FDE.
func aarch64PLT(f *elf.File) ([]PLTFDE, []PLTSection, error) {
	s := f.Section(PLTMain.String())
	if s == nil || s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 || s.Size > maxA64PLTBytes {
		return nil, nil, nil
	}
	code, err := sectionHead(s, int(s.Size))
	if err != nil {
		return nil, nil, err
	}
	fdes := aarch64PLTFDEs(code, s.Addr)
	if len(fdes) == 0 {
		return nil, nil, nil
	}
	return fdes, []PLTSection{{Kind: PLTMain, Addr: s.Addr, Size: s.Size}}, nil
}

// aarch64PLTFDEs recognizes the stubs of the .plt code at addr: PLT0 if
// it starts the section, then runs of uniform PLTn entries (one PCMASK
// FDE each) and the TLSDESC trampoline.
func aarch64PLTFDEs(code []byte, addr uint64) []PLTFDE {
	var out []PLTFDE
	pos := uint64(0)
	if tp := firstMatch(a64PLT0Templates, code); tp != nil {
		out = append(out, PLTFDE{Start: addr, FDE: pltFDE(tp.size(), emit.PCInc, 0, emit.FRETypeFor(uint32(tp.size())), tp.fres)})
		pos = tp.size()
	}
	for pos < uint64(len(code)) {
		rest := code[pos:]
		if tp := firstMatch(a64PLTnTemplates, rest); tp != nil {
			n := uint64(1)
			for (n+1)*tp.size() <= uint64(len(rest)) && tp.matches(rest[n*tp.size():]) {
				n++
			}
			size := n * tp.size()
			out = append(out, PLTFDE{Start: addr + pos, FDE: pltFDE(size, emit.PCMask, uint8(tp.size()), emit.FRETypeFor(uint32(size)), tp.fres)})
			pos += size
			continue
		}
		if tp := firstMatch(a64TLSDescTemplates, rest); tp != nil {
			out = append(out, PLTFDE{Start: addr + pos, FDE: pltFDE(tp.size(), emit.PCInc, 0, emit.FRETypeFor(uint32(tp.size())), tp.fres)})
			pos += tp.size()
			continue
		}
		break
	}
	return out
}

// firstMatch returns the template code starts with, or nil.
func firstMatch(tps []a64PLTTemplate, code []byte) *a64PLTTemplate {
	for i := range tps {
		if tps[i].matches(code) {
			return &tps[i]
		}
	}
	return nil
}
