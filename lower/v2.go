package lower

import (
	"debug/elf"
	"fmt"
	"sort"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// V2Layout is the flavour of SFrame version 2 that Options.Version 2
// writes: the two that GNU binutils released, which differ in what a
// function's start field is relative to.
type V2Layout uint8

const (
	// V2PCRel is binutils 2.45's layout: SFRAME_F_FDE_FUNC_START_PCREL
	// set, every start field relative to itself (in objects and linked
	// files alike). The 2025 series of the Linux kernel's SFrame unwinder
	// requires the flag; libsframe 2.45 and later read it.
	V2PCRel V2Layout = iota
	// V2Binutils244 is binutils 2.41-2.44's layout, the one the
	// libsframe, objdump and readelf of Debian 13 read (they refuse the
	// PCREL flag): no flag, a linked file's start fields relative to the
	// start of the section (an object's are 0 with a PC-relative
	// relocation, as in V2PCRel). binutils 2.44 has no s390x SFrame and
	// no notion of an outermost frame (an FRE without data words).
	V2Binutils244
)

// String returns the binutils release that writes the layout.
func (l V2Layout) String() string {
	if l == V2Binutils244 {
		return "2.44"
	}
	return "2.45"
}

// V2Header returns the header of a version 2 section for t in layout l.
func (t Target) V2Header(l V2Layout) emit.Header {
	h := t.Header()
	h.Version = emit.Version2
	if l == V2Binutils244 {
		h.Flags &^= emit.FlagFDEFuncStartPCRel
	}
	return h
}

// V2RelocType returns the ELF relocation type gas 2.44/2.45 use for the
// 32-bit PC-relative start field of a version 2 FDE: R_X86_64_PC32,
// R_AARCH64_PREL32 or R_390_PC32.
func (t Target) V2RelocType() uint32 {
	return t.reloc(elf.R_X86_64_PC32, elf.R_AARCH64_PREL32, elf.R_390_PC32)
}

// checkV2 says whether t can be written in version 2 layout l.
func checkV2(t Target, l V2Layout) error {
	if l == V2Binutils244 && t.Arch == S390X {
		return fmt.Errorf("SFrame version 2 as binutils 2.44 writes it has no s390x ABI (binutils 2.45 added it)")
	}
	return nil
}

// toVersion2 turns the version 3 result res, just lowered, into version
// 2 in layout l: the functions version 2 cannot express (V2Refusal) are
// left out and listed in res.Skipped, in CFI order, with the reason; the
// others keep their FDE and FREs as they are (the two versions' FREs are
// the same; emit writes the 20-byte FDE from the record), with the
// version 2 start field's relocation. It is the one conversion from
// version 3 to version 2.
func toVersion2(res *Result, t Target, l V2Layout) error {
	if err := checkV2(t, l); err != nil {
		return err
	}
	old := res.Section
	sec := &emit.Section{
		Header:  t.V2Header(l),
		Index:   make([]emit.IndexEntry, 0, len(old.Index)),
		FREData: make([]byte, 0, len(old.FREData)),
		Trailer: old.Trailer,
	}
	emitted := make(map[*cfi.FDE]int) // signal frames kept without FREs, by source
	for k, s := range res.Skipped {
		if s.Emitted {
			emitted[s.FDE] = k
		}
	}
	kept := 0
	refused := false
	for i := range old.Index {
		f, err := old.FDE(i)
		if err != nil {
			return fmt.Errorf("version 2: %w", err)
		}
		var src *cfi.FDE
		if res.Sources != nil {
			src = res.Sources[i]
		}
		if reason := V2Refusal(t, l, &f); reason != "" {
			if k, ok := emitted[src]; ok && src != nil {
				res.Skipped[k].Reason, res.Skipped[k].Emitted = reason, false
			} else {
				res.Skipped = append(res.Skipped, Skip{FDE: src, Reason: reason})
				refused = true
			}
			continue
		}
		if g, ok := s390xDefault(t, &f); ok {
			f = g
		}
		dropPastEnd(&f)
		if err := sec.AppendFDE(f); err != nil {
			return fmt.Errorf("version 2: FDE %d: %w", i, err)
		}
		res.Starts[kept] = res.Starts[i]
		if res.Sources != nil {
			res.Sources[kept] = src
		}
		if t.Relocatable {
			r := res.Relocs[i]
			r.Offset, r.Type = uint64(sec.FieldOffset(kept)), t.V2RelocType()
			res.Relocs[kept] = r
		}
		kept++
	}
	res.Section = sec
	res.Starts = res.Starts[:kept]
	if res.Sources != nil {
		res.Sources = res.Sources[:kept]
	}
	if t.Relocatable {
		res.Relocs = res.Relocs[:kept]
	}
	if refused {
		sort.SliceStable(res.Skipped, func(i, j int) bool {
			a, b := res.Skipped[i].FDE, res.Skipped[j].FDE
			return a != nil && b != nil && a.Offset < b.Offset
		})
	}
	return nil
}

// V2Refusal returns why version 2 in layout l cannot express the version 3
// FDE f of target t, or "" when it can (the FDE is then written as it is,
// in the 20-byte version 2 form). Version 2 has no flex FDEs (DRAP, a CFA
// not based on SP or FP, RA or FP in a register or not at CFA+offset) and
// no signal-frame bit; binutils 2.44's readers know no FRE without data
// words (an outermost frame, RA undefined).
func V2Refusal(t Target, l V2Layout, f *emit.FDE) string {
	const prefix = "SFrame version 2 cannot express it: "
	if f.Type() != emit.FDEDefault {
		if _, ok := s390xDefault(t, f); ok {
			return ""
		}
		return prefix + flexReason(t, f)
	}
	if f.Signal() {
		return prefix + "signal frame (version 2 has no signal-frame bit)"
	}
	if f.Info&0x40 != 0 {
		return prefix + fmt.Sprintf("FDE info %#02x has a version 3 bit", f.Info)
	}
	if l == V2Binutils244 {
		for j := range f.FREs {
			if f.FREs[j].RAUndefined() {
				return prefix + "outermost frame (RA undefined), which binutils 2.44 cannot read"
			}
		}
	}
	return ""
}

// flexReason says what a flex FDE's first FRE needing one holds that a
// default FDE cannot.
func flexReason(t Target, f *emit.FDE) string {
	r := t.regs()
	for j := range f.FREs {
		e := &f.FREs[j]
		w := e.Words
		if len(w) < 2 {
			continue
		}
		reg, deref, regP := emit.DecodeFlexControlWord(e.UWord(0))
		switch {
		case deref:
			return "CFA loaded from memory (DRAP, .cfi_def_cfa_expression)"
		case regP && uint64(reg) != r.sp && uint64(reg) != r.fp:
			return fmt.Sprintf("CFA based on register %d, neither SP nor FP", reg)
		}
		p := 2
		for _, name := range []string{"RA", "FP"} {
			if p >= len(w) {
				break
			}
			if name == "RA" && w[p] == 0 { // padding: RA has no rule
				p++
				continue
			}
			if p+1 >= len(w) {
				break
			}
			reg, deref, regP := emit.DecodeFlexControlWord(e.UWord(p))
			switch {
			case regP && !deref:
				return fmt.Sprintf("%s saved in register %d", name, reg)
			case regP:
				return fmt.Sprintf("%s saved at an offset from register %d, not from the CFA", name, reg)
			case !deref:
				return fmt.Sprintf("%s is the CFA plus an offset (val_offset)", name)
			case name == "RA" && r.amd64 && int64(w[p+1]) != int64(r.fixedRA):
				return fmt.Sprintf("RA saved at CFA%+d, not at the fixed CFA%+d", w[p+1], r.fixedRA)
			}
			p += 2
		}
	}
	return "needs a flex FDE (version 3 only)"
}

// dropPastEnd removes the FREs of a PCINC function that start at or past
// its end: they cover no address, and libsframe 2.44 asserts (aborts the
// reading program) on an FRE start not below the function size.
func dropPastEnd(f *emit.FDE) {
	if f.PCType() != emit.PCInc {
		return
	}
	n := len(f.FREs)
	for n > 0 && uint64(f.FREs[n-1].StartAddr) >= uint64(f.Size) {
		n--
	}
	f.FREs = f.FREs[:n]
}

// s390xDefault returns the s390x flex FDE f as the default FDE version 2
// writes for the same CFI (binutils 2.45): version 2 says "saved in
// register R" in a default FDE's RA or FP word as (R<<1)|1
// (SFRAME_V2_S390X_OFFSET_ENCODE_REGNUM), where version 3 uses a flex FDE.
// ok is false unless f is an s390x flex FDE whose every FRE has a CFA of
// SP or FP plus an offset and RA and FP each either not saved, saved at
// CFA+offset or held in a register.
func s390xDefault(t Target, f *emit.FDE) (g emit.FDE, ok bool) {
	r := t.regs()
	if !r.s390x || f.Type() != emit.FDEFlex {
		return g, false
	}
	g = *f
	g.Info2 = 0
	g.FREs = make([]emit.FRE, len(f.FREs))
	for j := range f.FREs {
		e := &f.FREs[j]
		w := e.Words
		if len(w) == 0 { // RA undefined: the same in both
			g.FREs[j] = *e
			continue
		}
		if len(w) < 2 || e.MangledRA() {
			return g, false
		}
		reg, deref, regP := emit.DecodeFlexControlWord(e.UWord(0))
		if deref || !regP || uint64(reg) != r.sp && uint64(reg) != r.fp {
			return g, false
		}
		words := []int32{w[1]} // the CFA offset, encoded in both versions
		p := 2
		var saved [2]int32 // RA, FP words; 0: not saved (padding)
		var has [2]bool
		for k := range 2 {
			if p >= len(w) {
				break
			}
			if k == 0 && w[p] == 0 { // padding: RA has no rule
				p++
				continue
			}
			if p+1 >= len(w) {
				return g, false
			}
			sreg, sderef, sregP := emit.DecodeFlexControlWord(e.UWord(p))
			switch {
			case sregP && !sderef && w[p+1] == 0:
				saved[k] = int32(sreg<<1 | 1)
			case !sregP && sderef && w[p+1]&1 == 0 && w[p+1] != 0:
				saved[k] = w[p+1] // CFA-relative: even (8-byte slots)
			default:
				return g, false
			}
			has[k] = true
			p += 2
		}
		if p != len(w) {
			return g, false
		}
		switch {
		case has[1]:
			words = append(words, saved[0], saved[1])
		case has[0]:
			words = append(words, saved[0])
		}
		size := emit.DataWord1B
		for _, v := range words {
			s, fits := emit.DataWordSizeFor(int64(v))
			if !fits {
				return g, false
			}
			size = max(size, s)
		}
		g.FREs[j] = emit.FRE{StartAddr: e.StartAddr, Info: emit.FREInfo(uint64(reg) == r.sp, len(words), size, false), Words: words}
	}
	return g, true
}
