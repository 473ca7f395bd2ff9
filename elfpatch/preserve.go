package elfpatch

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// CheckPreserved reports how out (what a patch wrote) fails to keep what
// in had: every section but .sframe, .rela.sframe and the section-name
// table keeps its index, name, type, flags, link, address and contents.
// Allowed changes: notes may move (linked files); in objects the symbol
// table gets section symbols inserted before the first global one, so
// symbol indices in relocations and group signatures shift, and the table's
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
	var symIn, symOut []elf.Symbol
	var symOK bool
	if rel {
		a, e1 := fi.Symbols()
		b, e2 := fo.Symbols()
		symIn, symOut, symOK = a, b, e1 == nil && e2 == nil
		if symOK {
			if err := symbolsKept(symIn, symOut); err != nil {
				return err
			}
		}
	}
	isSFrame := func(i int) bool {
		s := fi.Sections[i]
		return s.Name == ".sframe" || s.Type == elf.SectionType(0x6ffffff4)
	}
	for i, s := range fi.Sections {
		// The SFrame section and its relocations (by name, or by sh_info)
		// are what a patch replaces.
		relocatesSFrame := (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && int(s.Info) < len(fi.Sections) && int(s.Info) > 0 && isSFrame(int(s.Info))
		if i == 0 || i == shstrndx || isSFrame(i) || relocatesSFrame || s.Name == ".rela.sframe" || s.Type == elf.SectionType(shtGNUSFrame) {
			continue
		}
		o := fo.Sections[i]
		where := fmt.Sprintf("section %d (%s)", i, s.Name)
		if o.Name != s.Name || o.Type != s.Type || o.Flags != s.Flags || o.Link != s.Link {
			return fmt.Errorf("%s: header changed: name %q type %v flags %v link %d, was %q %v %v %d", where, o.Name, o.Type, o.Flags, o.Link, s.Name, s.Type, s.Flags, s.Link)
		}
		if o.Addr != s.Addr && !movable(s) {
			return fmt.Errorf("%s: address %#x, was %#x", where, o.Addr, s.Addr)
		}
		shifts := rel && (s.Type == elf.SHT_SYMTAB || s.Type == elf.SHT_GROUP)
		if o.Info != s.Info && !shifts {
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
			if err := relocsKept(fi.ByteOrder, s.Type == elf.SHT_RELA, a, b, symIn, symOut); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		case !bytes.Equal(a, b):
			return fmt.Errorf("%s: contents changed", where)
		}
	}
	return nil
}

// symbolsKept checks that out is in with only unnamed local STT_SECTION
// symbols inserted.
func symbolsKept(in, out []elf.Symbol) error {
	j := 0
	for i, s := range in {
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

func sameSym(a, b elf.Symbol) bool {
	return a.Name == b.Name && a.Info == b.Info && a.Other == b.Other && a.Section == b.Section && a.Value == b.Value && a.Size == b.Size
}

// relocsKept compares two relocation sections entry by entry: same offset,
// type and addend, a symbol equal by name, section and value.
func relocsKept(bo binary.ByteOrder, rela bool, a, b []byte, symIn, symOut []elf.Symbol) error {
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
