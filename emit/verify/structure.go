package verify

import (
	"debug/elf"
	"encoding/binary"

	"github.com/sframe-gen/sframe-gen/emit"
)

// functionStarts sets c.starts: for linked files from the start fields and
// the section address; for relocatable objects from .rela.sframe (GNU ld
// expects exactly one relocation per FDE, at its start field, in FDE
// order).
func (c *checker) functionStarts() {
	n := len(c.fdes)
	c.starts = make([]funcKey, n)
	c.ok = make([]bool, n)
	if !c.rel {
		for i := range c.fdes {
			c.starts[i] = funcKey{0, c.s.FuncStart(i, c.sec.Addr)}
			c.ok[i] = true
		}
		return
	}
	idx := -1
	for i, s := range c.f.Sections {
		if s == c.sec {
			idx = i
		}
	}
	var rela []byte
	var relaName string
	for _, s := range c.f.Sections {
		if (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && int(s.Info) == idx {
			if s.Type == elf.SHT_REL {
				c.problem(KindConsumer, -1, "%s: SHT_REL relocations for .sframe (GNU as writes SHT_RELA)", s.Name)
				return
			}
			d, err := s.Data()
			if err != nil {
				c.problem(KindFormat, -1, "%s: %v", s.Name, err)
				return
			}
			rela, relaName = d, s.Name
		}
	}
	if n > 0 && rela == nil {
		c.problem(KindConsumer, -1, "relocatable object without .rela.sframe: the %d function starts are unknown", n)
		return
	}
	if c.f.Class != elf.ELFCLASS64 || len(rela)%24 != 0 {
		c.problem(KindFormat, -1, "%s: size %#x is not a multiple of 24 (Elf64_Rela)", relaName, len(rela))
		return
	}
	bits := 64
	if c.s.Header.Version == emit.Version2 {
		bits = 32
	}
	want := pcRelocs[c.f.Machine][bits/64]
	syms, _ := c.f.Symbols()
	bo := c.f.ByteOrder
	k := 0
	for p := 0; p < len(rela); p += 24 {
		off := bo.Uint64(rela[p:])
		info := bo.Uint64(rela[p+8:])
		addend := int64(bo.Uint64(rela[p+16:]))
		typ, symIdx := uint32(info), info>>32
		if typ == 0 { // R_*_NONE, skipped by ld
			continue
		}
		if k >= n {
			c.problem(KindConsumer, -1, "%s: relocation %d at %#x: more relocations than FDEs (%d)", relaName, p/24, off, n)
			break
		}
		if off != uint64(c.s.FieldOffset(k)) {
			c.problem(KindConsumer, k, "%s: relocation %d is at %#x, not at FDE %d's start field %#x (GNU ld expects one per FDE, in order)",
				relaName, p/24, off, k, c.s.FieldOffset(k))
			k++
			continue
		}
		if symIdx == 0 || symIdx > uint64(len(syms)) {
			c.problem(KindFormat, k, "%s: relocation %d: symbol index %d out of range", relaName, p/24, symIdx)
			k++
			continue
		}
		sym := syms[symIdx-1]
		if sym.Section == elf.SHN_UNDEF || sym.Section >= elf.SHN_LORESERVE {
			c.problem(KindConsumer, k, "%s: relocation %d: symbol %q is not defined in a section", relaName, p/24, sym.Name)
			k++
			continue
		}
		c.starts[k] = funcKey{int(sym.Section), sym.Value + uint64(addend)}
		c.ok[k] = true
		if typ != want {
			c.problem(KindConsumer, k, "%s: relocation %d has type %d, not the %d-bit PC-relative %d", relaName, p/24, typ, bits, want)
		}
		k++
	}
	if k < n {
		c.problem(KindConsumer, -1, "%s: %d relocations for %d FDEs: the starts of FDEs %d.. are unknown", relaName, k, n, k)
	}
}

// pcRelocs are, per machine, the PC-relative relocations of an FDE's
// start field: 32-bit (version 2, gas 2.41-2.45) and 64-bit (version 3).
var pcRelocs = map[elf.Machine][2]uint32{
	elf.EM_X86_64:  {uint32(elf.R_X86_64_PC32), uint32(elf.R_X86_64_PC64)},
	elf.EM_AARCH64: {uint32(elf.R_AARCH64_PREL32), uint32(elf.R_AARCH64_PREL64)},
	elf.EM_S390:    {uint32(elf.R_390_PC32), uint32(elf.R_390_PC64)},
}

// checkHeader applies the header rules: version 3's, or for a version 2
// section those of its readers (binutils 2.41-2.45, the 2025 kernel series).
func (c *checker) checkHeader() {
	h := &c.s.Header
	switch h.Version {
	case emit.Version3:
		if h.Flags&emit.FlagFDEFuncStartPCRel == 0 {
			c.problem(KindConsumer, -1, "flags %v lack SFRAME_F_FDE_FUNC_START_PCREL (required by GNU ld and the Linux kernel)", h.Flags)
		}
	case emit.Version2:
		c.checkV2Header()
	default:
		c.problem(KindConsumer, -1, "version %d: the Linux kernel and GNU ld 2.46+ accept only version 3", h.Version)
	}
	if !c.rel && h.Flags&emit.FlagFDESorted == 0 {
		c.problem(KindConsumer, -1, "flags %v lack SFRAME_F_FDE_SORTED (required by the Linux kernel in a linked file)", h.Flags)
	}
	if len(h.AuxHeader) != 0 {
		c.problem(KindConsumer, -1, "auxiliary header of %d bytes (the Linux kernel requires sfh_auxhdr_len 0)", len(h.AuxHeader))
	}
	if c.s.Shares() && h.ABI.ByteOrder() == binary.BigEndian {
		c.problem(KindConsumer, -1, "big-endian section whose functions share FRE data: GNU libsframe on a little-endian host (cross ld, objdump) converts the byte order function by function and rejects it")
	}
	if !c.rel && (len(c.fdes) == 0 || c.r.FREs == 0) {
		c.problem(KindConsumer, -1, "empty section (%d FDEs, %d FREs): the Linux kernel rejects it", len(c.fdes), c.r.FREs)
	}
	if len(c.data) >= emit.HeaderSize {
		if off := c.order().Uint32(c.data[20:]); off != 0 {
			c.problem(KindConsumer, -1, "sfh_fdeoff is %#x: libsframe locates FDE start fields as if it were 0", off)
		}
	}
	want := map[elf.Machine][]emit.ABI{
		elf.EM_X86_64:  {emit.ABIAMD64LittleEndian},
		elf.EM_AARCH64: {emit.ABIAArch64LittleEndian, emit.ABIAArch64BigEndian},
		elf.EM_S390:    {emit.ABIS390XBigEndian},
	}[c.f.Machine]
	match := false
	for _, a := range want {
		if a == h.ABI && a.ByteOrder() == c.f.ByteOrder {
			match = true
		}
	}
	if !match {
		c.problem(KindFormat, -1, "ABI %v does not match the ELF file (%v, %v)", h.ABI, c.f.Machine, c.f.ByteOrder)
	}
}

// checkLoads reports PT_LOADs whose memory images overlap: the loader maps
// the later one over the earlier, so the bytes and permissions of the
// earlier one there are lost (a .data or .bss made read-only by a misplaced
// PT_LOAD, as strip from binutils 2.40 makes of a table moved to a new
// PT_LOAD). Sharing a page is normal; sharing addresses is not.
func (c *checker) checkLoads() {
	var prev *elf.Prog
	for _, p := range c.f.Progs {
		if p.Type != elf.PT_LOAD || p.Memsz == 0 {
			continue
		}
		if prev != nil && p.Vaddr < prev.Vaddr+prev.Memsz && prev.Vaddr < p.Vaddr+p.Memsz {
			c.problem(KindConsumer, -1, "PT_LOAD [%#x, %#x) overlaps PT_LOAD [%#x, %#x): the loader maps one over the other",
				p.Vaddr, p.Vaddr+p.Memsz, prev.Vaddr, prev.Vaddr+prev.Memsz)
		}
		if prev == nil || p.Vaddr+p.Memsz > prev.Vaddr+prev.Memsz {
			prev = p
		}
	}
}

// checkELF applies the rules on how the section sits in the ELF file.
func (c *checker) checkELF() {
	sh := c.sec
	if c.rel {
		if sh.Type != emit.SectionType {
			c.problem(KindConsumer, -1, "section %s has type %v: GNU ld 2.45+ accepts only SHT_GNU_SFRAME input", sh.Name, sh.Type)
		}
		return
	}
	if sh.Type != emit.SectionType {
		c.note(-1, "section %s has type %v, not SHT_GNU_SFRAME (binutils 2.44 and older)", sh.Name, sh.Type)
	}
	if sh.Flags&elf.SHF_ALLOC == 0 {
		c.problem(KindConsumer, -1, "section %s is not SHF_ALLOC: it is not loaded", sh.Name)
	}
	c.checkLoads()
	var sf []*elf.Prog
	for _, p := range c.f.Progs {
		if p.Type == programType {
			sf = append(sf, p)
		}
	}
	for _, h := range ExecHeaders(c.f) {
		if h.Takes >= 0 {
			c.problem(KindConsumer, -1, "program header %d (%v) has PF_X: %s", h.Index, h.Type, h.Why)
		} else {
			c.note(-1, "program header %d (%v) has PF_X: %s", h.Index, h.Type, h.Why)
		}
	}
	switch len(sf) {
	case 0:
		c.problem(KindConsumer, -1, "no PT_GNU_SFRAME program header: the kernel and glibc find the section through it")
		return
	case 1:
	default:
		c.problem(KindConsumer, -1, "%d PT_GNU_SFRAME program headers", len(sf))
	}
	p := sf[0]
	if p.Vaddr != sh.Addr || p.Off != sh.Offset {
		c.problem(KindConsumer, -1, "PT_GNU_SFRAME at address %#x (offset %#x) but section %s at %#x (offset %#x)",
			p.Vaddr, p.Off, sh.Name, sh.Addr, sh.Offset)
	}
	switch {
	case p.Filesz < sh.Size || p.Memsz < sh.Size:
		c.problem(KindConsumer, -1, "PT_GNU_SFRAME covers %#x bytes (memory %#x), section %s has %#x: the section is cut",
			p.Filesz, p.Memsz, sh.Name, sh.Size)
	case p.Filesz > sh.Size:
		c.note(-1, "PT_GNU_SFRAME covers %#x bytes, section %s has %#x (GNU ld keeps the size laid out before merging; readers use the header's counts)",
			p.Filesz, sh.Name, sh.Size)
	}
	in := false
	for _, l := range c.f.Progs {
		if l.Type == elf.PT_LOAD && l.Vaddr <= p.Vaddr && p.Vaddr-l.Vaddr <= l.Filesz && p.Filesz <= l.Filesz-(p.Vaddr-l.Vaddr) &&
			p.Off-l.Off == p.Vaddr-l.Vaddr {
			in = true
			if l.Flags&elf.PF_W != 0 {
				c.note(-1, "the PT_LOAD holding PT_GNU_SFRAME is writable")
			}
		}
	}
	if !in {
		c.problem(KindConsumer, -1, "PT_GNU_SFRAME [%#x, %#x) is not inside one PT_LOAD's file-backed part", p.Vaddr, p.Vaddr+p.Filesz)
	}
}

// checkFDEs applies the per-function rules.
func (c *checker) checkFDEs() {
	var exec []*elf.Prog
	for _, p := range c.f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			exec = append(exec, p)
		}
	}
	h := &c.s.Header
	var prev uint64
	for i := range c.fdes {
		fde := &c.fdes[i]
		start := c.starts[i].addr
		if fde.Type() > emit.FDEFlex {
			c.problem(KindFormat, i, "unknown FDE type %d", fde.Type())
		}
		if fde.PCType() == emit.PCMask && fde.RepSize == 0 {
			c.problem(KindConsumer, i, "PCMASK FDE with rep_size 0 (a tracer divides by it)")
		}
		if !c.rel && c.ok[i] {
			if i > 0 && start <= prev {
				c.problem(KindConsumer, i, "FDE %d starts at %#x, not after FDE %d at %#x: FDE starts must be strictly increasing", i, start, i-1, prev)
			}
			prev = start
			in := false
			for _, p := range exec {
				if start >= p.Vaddr && start-p.Vaddr < p.Memsz && uint64(fde.Size) <= p.Memsz-(start-p.Vaddr) {
					in = true
				}
			}
			if !in {
				c.problem(KindConsumer, i, "function [%#x, %#x) is not inside an executable PT_LOAD", start, start+uint64(fde.Size))
			}
		}
		if c.rel && c.ok[i] {
			k := c.starts[i].section
			if k <= 0 || k >= len(c.f.Sections) {
				c.problem(KindFormat, i, "function in section %d, which does not exist", k)
			} else if s := c.f.Sections[k]; s.Flags&elf.SHF_EXECINSTR == 0 {
				c.problem(KindConsumer, i, "function in section %s, which is not executable", s.Name)
			} else if start > s.Size || uint64(fde.Size) > s.Size-start {
				c.problem(KindFormat, i, "function [%#x, %#x) runs past the end of %s (%#x bytes)", start, start+uint64(fde.Size), s.Name, s.Size)
			}
		}
		if len(fde.FREs) == 0 {
			if fde.Signal() && fde.Size > 0 {
				c.r.SignalNoFREs++
			}
			continue
		}
		if fde.FREs[0].StartAddr != 0 {
			c.problem(KindConsumer, i, "first FRE starts at %#x, not 0: no FRE covers the function's first bytes", fde.FREs[0].StartAddr)
		}
		for j := range fde.FREs {
			e := &fde.FREs[j]
			if j > 0 && e.StartAddr <= fde.FREs[j-1].StartAddr {
				c.problem(KindConsumer, i, "FRE %d starts at %#x, not after FRE %d at %#x: FRE starts must be strictly increasing (Linux kernel)",
					j, e.StartAddr, j-1, fde.FREs[j-1].StartAddr)
			}
			switch fde.PCType() {
			case emit.PCInc:
				if e.StartAddr > fde.Size {
					c.problem(KindConsumer, i, "FRE %d starts at %#x, past the function's size %#x", j, e.StartAddr, fde.Size)
				}
			case emit.PCMask:
				if fde.RepSize != 0 && e.StartAddr >= uint32(fde.RepSize) {
					c.problem(KindFormat, i, "PCMASK FRE %d starts at %#x, not within the %d-byte repeated block: never used", j, e.StartAddr, fde.RepSize)
				}
			}
			if fde.Type() <= emit.FDEFlex {
				if _, _, msg := sframeFrame(h, fde, e); msg != "" {
					c.problem(KindConsumer, i, "FRE %d: %s", j, msg)
				}
			}
		}
	}
}
