// Package elfcheck holds the tests' check that a patched ELF file keeps
// what its input had (CheckPreserved): the patcher's tests and the damage
// test of cmd/sframe-gen run it on every file they patch.
package elfcheck

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// CheckPreserved reports how out (what a patch wrote) fails to keep what
// in had: every section but .sframe, .rela.sframe and the section-name
// table keeps its name, type, flags, link, address and contents, and its
// place among the others. Allowed changes: notes may move (linked files);
// in objects the SFrame sections may be numbered among the others (as GNU
// as numbers them in an object BFD laid out), the sections after them
// moving up, with every section index renumbered to match; the symbol
// table gets section symbols inserted among the local ones, so symbol
// indices in relocations and group signatures shift, and the table's
// sh_info grows. Relocations must still name the same symbols. Sections
// debug/elf cannot read in the input are not compared; an input it cannot
// read at all gives nil.
func CheckPreserved(in, out []byte) error {
	fi, err := elf.NewFile(bytes.NewReader(in))
	if err != nil || fi.Class != elf.ELFCLASS64 {
		return nil
	}
	fo, err := elf.NewFile(bytes.NewReader(out))
	if err != nil {
		return fmt.Errorf("output unreadable: %v", err)
	}
	if len(fo.Sections) < len(fi.Sections) {
		return fmt.Errorf("output has %d sections, input %d", len(fo.Sections), len(fi.Sections))
	}
	rel := fi.Type == elf.ET_REL
	shstrndx := int(fi.ByteOrder.Uint16(in[0x3e:]))
	idx, err := keptSections(fi, fo, rel)
	if err != nil {
		return err
	}
	var symIn, symOut []elf.Symbol
	var symOK bool
	if rel {
		a, e1 := fi.Symbols()
		b, e2 := fo.Symbols()
		symIn, symOut, symOK = a, b, e1 == nil && e2 == nil
		if symOK {
			if err := symbolsKept(symIn, symOut, idx); err != nil {
				return err
			}
		}
	}
	for i, s := range fi.Sections {
		if i == 0 || i == shstrndx || sframeSection(fi, i) {
			continue
		}
		o := fo.Sections[idx[i]]
		where := fmt.Sprintf("section %d (%s)", i, s.Name)
		link, info := s.Link, s.Info
		if linksSection(uint32(s.Type)) || s.Flags&elf.SHF_LINK_ORDER != 0 {
			link = mapSection(idx, link)
		}
		if s.Type == elf.SHT_REL || s.Type == elf.SHT_RELA || s.Flags&elf.SHF_INFO_LINK != 0 {
			info = mapSection(idx, info)
		}
		if o.Name != s.Name || o.Type != s.Type || o.Flags != s.Flags || o.Link != link {
			return fmt.Errorf("%s: header changed: name %q type %v flags %v link %d, was %q %v %v %d", where, o.Name, o.Type, o.Flags, o.Link, s.Name, s.Type, s.Flags, s.Link)
		}
		if o.Addr != s.Addr && !movable(s) {
			return fmt.Errorf("%s: address %#x, was %#x", where, o.Addr, s.Addr)
		}
		shifts := rel && (s.Type == elf.SHT_SYMTAB || s.Type == elf.SHT_GROUP)
		if o.Info != info && !shifts {
			return fmt.Errorf("%s: sh_info %d, was %d", where, o.Info, s.Info)
		}
		if s.Type == elf.SHT_NULL {
			continue // an inactive header: its other fields mean nothing (gABI)
		}
		if s.Type == elf.SHT_NOBITS {
			if o.Size != s.Size {
				return fmt.Errorf("%s: size %#x, was %#x", where, o.Size, s.Size)
			}
			continue
		}
		a, err := s.Data()
		if err != nil {
			continue
		}
		b, err := o.Data()
		if err != nil {
			return fmt.Errorf("%s: unreadable in the output: %v", where, err)
		}
		switch {
		case rel && s.Type == elf.SHT_SYMTAB, rel && s.Type == elf.SHT_SYMTAB_SHNDX:
			// compared as symbols above
		case rel && s.Type == elf.SHT_GROUP:
			if err := groupKept(fi.ByteOrder, a, b, idx); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		case !rel && (s.Type == elf.SHT_SYMTAB || s.Type == elf.SHT_DYNSYM):
			// Symbols of moved notes and .interp move with them.
			if err := linkedSymbolsKept(fi, fo, s.Type); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		case !rel && s.Type == elf.SHT_DYNAMIC && fi.Class == elf.ELFCLASS64:
			// Entries pointing at moved tables move with them.
			if err := dynamicKept(fi, fo, a, b); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		case rel && (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && int(s.Link) < len(fi.Sections) && fi.Sections[s.Link].Type == elf.SHT_SYMTAB:
			if !symOK {
				continue
			}
			if err := relocsKept(fi.ByteOrder, s.Type == elf.SHT_RELA, a, b, symIn, symOut, idx); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		case !bytes.Equal(a, b):
			return fmt.Errorf("%s: contents changed", where)
		}
	}
	return nil
}

// sframeSection reports whether section i of f is one a patch replaces:
// the SFrame section (by name or type) or its relocations (by name, or by
// sh_info).
func sframeSection(f *elf.File, i int) bool {
	isSFrame := func(i int) bool {
		s := f.Sections[i]
		return s.Name == ".sframe" || s.Type == elf.SectionType(shtGNUSFrame)
	}
	s := f.Sections[i]
	relocatesSFrame := (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && int(s.Info) < len(f.Sections) && int(s.Info) > 0 && isSFrame(int(s.Info))
	return isSFrame(i) || relocatesSFrame || s.Name == ".rela.sframe"
}

// keptSections returns the output index of every input section: the same
// in a linked file; in an object, the sections but the SFrame ones keep
// their order, the SFrame ones possibly numbered among them.
func keptSections(fi, fo *elf.File, rel bool) ([]int, error) {
	idx := make([]int, len(fi.Sections))
	if !rel {
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	var outs []int
	for j := range fo.Sections {
		if !sframeSection(fo, j) {
			outs = append(outs, j)
		}
	}
	k := 0
	for i := range fi.Sections {
		if sframeSection(fi, i) {
			idx[i] = -1
			continue
		}
		if k == len(outs) {
			return nil, fmt.Errorf("section %d (%s) lost: the output has %d sections other than SFrame ones", i, fi.Sections[i].Name, len(outs))
		}
		idx[i] = outs[k]
		k++
	}
	if k != len(outs) {
		return nil, fmt.Errorf("output has %d sections other than SFrame ones, input %d", len(outs), k)
	}
	return idx, nil
}

// mapSection maps a section index of the input to the output's (idx);
// indices that are not those of kept sections are returned as they are.
func mapSection(idx []int, x uint32) uint32 {
	if x > 0 && int64(x) < int64(len(idx)) && idx[x] >= 0 {
		return uint32(idx[x])
	}
	return x
}

// groupKept compares two SHT_GROUP sections: the same flags and members,
// renumbered.
func groupKept(bo binary.ByteOrder, a, b []byte, idx []int) error {
	if len(a) != len(b) {
		return fmt.Errorf("size %#x, was %#x", len(b), len(a))
	}
	for off := 0; off+4 <= len(a); off += 4 {
		x, y := bo.Uint32(a[off:]), bo.Uint32(b[off:])
		if off > 0 {
			x = mapSection(idx, x)
		}
		if x != y {
			return fmt.Errorf("entry %d: %d, want %d", off/4, y, x)
		}
	}
	return nil
}

// symbolsKept checks that out is in with only unnamed local STT_SECTION
// symbols inserted (section indices renumbered by idx).
func symbolsKept(in, out []elf.Symbol, idx []int) error {
	j := 0
	for i, s := range in {
		s.Section = elf.SectionIndex(mapSectionIndex(idx, s.Section))
		for j < len(out) && !sameSym(out[j], s) && out[j].Name == "" && elf.ST_TYPE(out[j].Info) == elf.STT_SECTION {
			j++
		}
		if j == len(out) || !sameSym(out[j], s) {
			return fmt.Errorf("symbol %d (%q) lost or changed", i+1, s.Name)
		}
		j++
	}
	return nil
}

// mapSectionIndex is mapSection for a symbol's section index (the reserved
// ones, SHN_LORESERVE and up, are kept).
func mapSectionIndex(idx []int, x elf.SectionIndex) elf.SectionIndex {
	if x >= elf.SHN_LORESERVE {
		return x
	}
	return elf.SectionIndex(mapSection(idx, uint32(x)))
}

func sameSym(a, b elf.Symbol) bool {
	return a.Name == b.Name && a.Info == b.Info && a.Other == b.Other && a.Section == b.Section && a.Value == b.Value && a.Size == b.Size
}

// relocsKept compares two relocation sections entry by entry: same offset,
// type and addend, a symbol equal by name, section and value.
func relocsKept(bo binary.ByteOrder, rela bool, a, b []byte, symIn, symOut []elf.Symbol, idx []int) error {
	esz := 16
	if rela {
		esz = 24
	}
	if len(a) != len(b) {
		return fmt.Errorf("size %#x, was %#x", len(b), len(a))
	}
	sym := func(syms []elf.Symbol, k uint64) (elf.Symbol, bool) {
		if k == 0 || k > uint64(len(syms)) {
			return elf.Symbol{}, k == 0
		}
		return syms[k-1], true
	}
	for off := 0; off+esz <= len(a); off += esz {
		ia, ib := bo.Uint64(a[off+8:]), bo.Uint64(b[off+8:])
		if bo.Uint64(a[off:]) != bo.Uint64(b[off:]) || uint32(ia) != uint32(ib) || rela && bo.Uint64(a[off+16:]) != bo.Uint64(b[off+16:]) {
			return fmt.Errorf("entry at %#x changed", off)
		}
		sa, okA := sym(symIn, ia>>32)
		sa.Section = mapSectionIndex(idx, sa.Section)
		sb, okB := sym(symOut, ib>>32)
		if okA && (!okB || !sameSym(sa, sb)) {
			return fmt.Errorf("entry at %#x: symbol %d (%q) became %d (%q)", off, ia>>32, sa.Name, ib>>32, sb.Name)
		}
	}
	return nil
}

// movable reports whether elfpatch may move s in a linked file to make room
// for program headers: notes, .interp and the dynamic linker's tables
// (docs/elfpatch.md).
func movable(s *elf.Section) bool {
	return s.Type == elf.SHT_NOTE || s.Name == ".interp" || (s.Flags&elf.SHF_ALLOC != 0 && dynTable(uint32(s.Type)))
}

// dynamicKept compares two dynamic sections: the same entries, but for
// values that were the address of a moved table and are its new address.
func dynamicKept(fi, fo *elf.File, a, b []byte) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d bytes, was %d", len(b), len(a))
	}
	moved := map[uint64]uint64{}
	for i, s := range fi.Sections {
		if i < len(fo.Sections) && movable(s) && fo.Sections[i].Addr != s.Addr {
			moved[s.Addr] = fo.Sections[i].Addr
		}
	}
	o := fi.ByteOrder
	for e := 0; e+16 <= len(a); e += 16 {
		if o.Uint64(a[e:]) != o.Uint64(b[e:]) {
			return fmt.Errorf("entry %d: tag changed", e/16)
		}
		x, y := o.Uint64(a[e+8:]), o.Uint64(b[e+8:])
		if x != y && moved[x] != y {
			return fmt.Errorf("entry %d (tag %#x): value %#x, was %#x", e/16, o.Uint64(a[e:]), y, x)
		}
	}
	return nil
}

// linkedSymbolsKept compares the symbol tables of type typ of two linked
// files: the same symbols, values shifted only with their moved section.
func linkedSymbolsKept(fi, fo *elf.File, typ elf.SectionType) error {
	read := func(f *elf.File) ([]elf.Symbol, error) {
		if typ == elf.SHT_DYNSYM {
			return f.DynamicSymbols()
		}
		return f.Symbols()
	}
	a, err := read(fi)
	if err != nil {
		return nil
	}
	b, err := read(fo)
	if err != nil {
		return fmt.Errorf("symbols unreadable in the output: %v", err)
	}
	if len(a) != len(b) {
		return fmt.Errorf("%d symbols, was %d", len(b), len(a))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Value != y.Value && int(x.Section) < len(fi.Sections) && int(x.Section) < len(fo.Sections) && movable(fi.Sections[x.Section]) {
			y.Value = y.Value - fo.Sections[x.Section].Addr + fi.Sections[x.Section].Addr
		}
		if !sameSym(x, y) {
			return fmt.Errorf("symbol %d (%q) changed", i+1, x.Name)
		}
	}
	return nil
}
