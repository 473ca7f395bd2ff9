package elfpatch

import "fmt"

// An object that BFD's ELF writer laid out (GNU as, and ld -r and objcopy,
// which write through the same code) is written again as that writer
// writes it, with .sframe and .rela.sframe numbered where as --gsframe
// numbers them: then the patched object of GNU as equals, byte for byte,
// the object as --gsframe makes from the same source.
//
// BFD numbers the sections of a relocatable object (bfd/elf.c,
// assign_section_numbers): SHT_GROUP sections first, then every section in
// the order it was made, each followed by its relocation section, then
// .symtab, .symtab_shndx (only past SHN_LORESERVE sections), .strtab and
// .shstrtab. GNU as makes .sframe last, after .eh_frame (gas/dw2gencfi.c,
// cfi_finish): so .sframe and .rela.sframe come right before .symtab.
//
// It places them (assign_file_positions_except_relocs, then
// _bfd_elf_compute_section_file_positions and
// _bfd_elf_assign_file_positions_for_non_load): from the end of the ELF
// header, every section but the relocation sections and the tables, in
// index order, each at the next offset its sh_addralign allows (an
// SHT_NOBITS section too: it takes no bytes, but the offset after it is
// aligned); then .symtab, .symtab_shndx and .strtab; then the relocation
// sections in index order; then .shstrtab; then the section header table,
// aligned to 8.
//
// An object is taken for BFD's when its file is exactly that: numbered so
// and placed at the offsets this rule gives, with no program headers. Its
// output follows the rule too, so it is its own layout again (a second run
// writes nothing).

// bfdTables is where the trailing tables of a BFD-numbered object are.
type bfdTables struct {
	symtab, shndx, strtab int // -1 when absent
	// first is the index of the first table.
	first int
	// alignCap caps the alignment of the offsets of the sections placed
	// before the tables: 8 for the BFD of binutils 2.47 (its file
	// alignment, 1 << log_file_align), 0 (none) for that of 2.40.
	alignCap uint64
}

// shift renumbers the tables after k sections were inserted at index at.
func (t *bfdTables) shift(at, k int) {
	for _, i := range []*int{&t.symtab, &t.shndx, &t.strtab, &t.first} {
		if *i >= at {
			*i += k
		}
	}
}

// bfdNumbering returns the tables of f when its sections are numbered as
// BFD numbers a relocatable object's, with room to add two sections
// without extended numbering.
func bfdNumbering(f *file) (bfdTables, bool) {
	n := len(f.sects)
	t := bfdTables{symtab: -1, shndx: -1, strtab: -1}
	if f.hdr.typ != etRel || len(f.progs) > 0 || n < 2 || n+2 >= shnLoreserve || f.shstrndx != n-1 {
		return t, false
	}
	for i := 1; i < n; i++ {
		switch f.sects[i].Type {
		case shtSymtab:
			if t.symtab >= 0 {
				return t, false
			}
			t.symtab = i
		case shtSymtabShndx:
			if t.shndx >= 0 {
				return t, false
			}
			t.shndx = i
		}
	}
	t.first = n - 1
	if t.symtab >= 0 {
		t.strtab = int(f.sects[t.symtab].Link)
		if t.strtab != n-2 {
			return t, false
		}
		t.first = t.symtab
		want := n - 3
		if t.shndx >= 0 {
			want = n - 4
			if t.shndx != n-3 || int(f.sects[t.shndx].Link) != t.symtab || f.sects[t.shndx].Size == 0 {
				return t, false
			}
		}
		if t.symtab != want {
			return t, false
		}
	} else if t.shndx >= 0 {
		return t, false
	}
	groups := true
	for i := 1; i < t.first; i++ {
		s := &f.sects[i]
		switch {
		case s.Type == shtNull:
			return t, false
		case s.Type == shtGroup:
			if !groups {
				return t, false
			}
		default:
			groups = false
		}
		// A relocation section follows the section it applies to.
		if (s.Type == shtRel || s.Type == shtRela) && int(s.Info) != i-1 {
			return t, false
		}
	}
	return t, true
}

// bfdOffsets returns the file offset of every section of sects (numbered
// as bfdNumbering found, with tables t) and of the section header table, as
// BFD places them.
func bfdOffsets(sects []sect, t bfdTables, shstrndx int) (offs []uint64, shoff uint64) {
	offs = make([]uint64, len(sects))
	off := uint64(ehdrSize)
	capped := false
	place := func(i int) {
		s := &sects[i]
		a := max(s.Addralign, 1)
		if capped && t.alignCap > 0 {
			a = min(a, t.alignCap)
		}
		off = alignUp(off, a)
		offs[i] = off
		if s.Type != shtNobits {
			off += s.Size
		}
	}
	isRel := func(i int) bool { return sects[i].Type == shtRel || sects[i].Type == shtRela }
	capped = true
	for i := 1; i < len(sects); i++ {
		if !isRel(i) && i != t.symtab && i != t.shndx && i != t.strtab && i != shstrndx {
			place(i)
		}
	}
	capped = false
	for _, i := range []int{t.symtab, t.shndx, t.strtab} {
		if i >= 0 {
			place(i)
		}
	}
	for i := 1; i < len(sects); i++ {
		if isRel(i) {
			place(i)
		}
	}
	place(shstrndx)
	return offs, alignUp(off, 8)
}

// bfdLayout returns the tables of f when its file is laid out as BFD lays
// out a relocatable object (see the comment at the top of this file).
func bfdLayout(f *file) (bfdTables, bool) {
	t, ok := bfdNumbering(f)
	if !ok {
		return t, false
	}
	for i := range f.sects {
		if f.sects[i].Addralign > maxFileAlignBFD {
			return t, false
		}
	}
	// The newer rule first: where both give the input's offsets, they
	// give the same output (the sections after .sframe are aligned to
	// at most 8).
	for _, c := range []uint64{8, 0} {
		t.alignCap = c
		if offs, shoff := bfdOffsets(f.sects, t, f.shstrndx); shoff == f.hdr.shoff && sameOffsets(f.sects, offs) {
			return t, true
		}
	}
	return t, false
}

// sameOffsets reports whether offs are the offsets of sects.
func sameOffsets(sects []sect, offs []uint64) bool {
	for i := 1; i < len(sects); i++ {
		if offs[i] != sects[i].Off {
			return false
		}
	}
	return true
}

// sframeIndex is where GNU as numbers a new .sframe in an object numbered
// as BFD numbers it (t): made by cfi_finish after .eh_frame and before
// .debug_frame, so before a .debug_frame (and its relocations) that ends
// the sections, else before the tables.
func sframeIndex(f *file, t bfdTables) int {
	last := t.first - 1
	for last > 0 && (f.sects[last].Type == shtRel || f.sects[last].Type == shtRela) {
		last--
	}
	if last > 0 && (f.nameIs(&f.sects[last], ".debug_frame") || f.nameIs(&f.sects[last], ".zdebug_frame")) {
		return last
	}
	return t.first
}

// maxFileAlignBFD bounds the alignments of a file taken for BFD's: BFD
// aligns file offsets to the whole sh_addralign, which for an alignment of
// more than this would mostly pad.
const maxFileAlignBFD = 1 << 20

// layoutBFD writes the object as BFD writes it: section contents at the
// offsets bfdOffsets gives, the section header table, then the input's
// trailer.
func (o *object) layoutBFD(t bfdTables) []byte {
	h := o.hdr
	offs, shoff := bfdOffsets(o.sects, t, o.shstrndx)
	h.shoff, h.phoff = shoff, 0
	out := make([]byte, shoff, shoff+uint64(len(o.sects))*shdrSize+uint64(len(o.trailer)))
	for i := 1; i < len(o.sects); i++ {
		// The contents first: o.bytes reads the input at sh_offset.
		if c := o.bytes(i); o.takesRoom(i, c) {
			copy(out[offs[i]:], c)
		}
		o.sects[i].Off = offs[i]
	}
	out = append(out, encodeSects(&h, o.sects, o.shstrndx)...)
	out = append(out, o.trailer...)
	encodeHeader(out[:ehdrSize], &h)
	return out
}

// writeBFD gives an object laid out by BFD (its tables t) .sframe and
// .rela.sframe as GNU as --gsframe makes them, and writes it as BFD
// writes it (the arguments are addSFrame's).
func (o *object) writeBFD(t bfdTables, sframe []byte, relocs []Reloc, secSym map[uint32]uint32, symIdx, sfIdx, relIdx int) ([]byte, error) {
	f := o.file
	n := len(o.sects)
	// .sframe is numbered as GNU as numbers it; a relocation section
	// follows the section it applies to.
	at := sframeIndex(f, t)
	nameAt := bfdNameOffset(f, at)
	if sfIdx >= 0 {
		at, nameAt = sfIdx+1, -1
	}
	keep := sfIdx < 0 && symIdx >= 0 && o.keepsSectionSymbols(symIdx, at)
	o.addSFrame(sframe, relocs, secSym, symIdx, sfIdx, relIdx, nameAt)
	if k := len(o.sects) - n; k > 0 {
		if err := o.moveNew(n, at); err != nil {
			return nil, err
		}
		t.shift(at, k)
		if symIdx >= at {
			symIdx += k
		}
	}
	if keep {
		if err := o.addSectionSymbol(symIdx, at); err != nil {
			return nil, err
		}
	}
	return o.layoutBFD(t), nil
}

// bfdNameOffset is where BFD puts the name of a section numbered at in
// the section-name table of f: after the names of the sections before it
// (BFD adds the names in the order the sections were made, and
// SHT_GROUP sections, numbered first, are made last, by gas's
// elf_adjust_symtab).
func bfdNameOffset(f *file, at int) int {
	end := 0
	for i := 1; i < at; i++ {
		s := &f.sects[i]
		if s.Type == shtGroup || uint64(s.Name) >= uint64(len(f.shstrtab)) {
			continue
		}
		j := int(s.Name)
		for j < len(f.shstrtab) && f.shstrtab[j] != 0 {
			j++
		}
		end = max(end, j+1)
	}
	return min(end, len(f.shstrtab))
}

// keepsSectionSymbols reports whether the symbol table (section symIdx)
// has a section symbol for every section before index at that can have
// one made by the assembler: GNU as keeps the section symbols nothing
// refers to on AArch64 and s390x (not on x86-64), and then gives .sframe
// one.
func (o *object) keepsSectionSymbols(symIdx, at int) bool {
	tab, err := o.loadSymtab(symIdx)
	if err != nil {
		return false
	}
	need := map[uint32]bool{}
	for i := 1; i < at; i++ {
		if o.sectionSymbolMade(i) {
			need[uint32(i)] = true
		}
	}
	return len(tab.findSectionSymbols(o.hdr.order, need)) == len(need)
}

// sectionSymbolMade reports whether GNU as makes the section symbol of
// section i in the order it makes the sections (not the relocation
// sections, which have none, the groups, made last, nor the SHF_MERGE
// sections, whose symbols BFD adds after all the assembler's).
func (o *object) sectionSymbolMade(i int) bool {
	s := &o.sects[i]
	return s.Type != shtRel && s.Type != shtRela && s.Type != shtGroup && s.Flags&shfMerge == 0
}

// addSectionSymbol gives section sec (a new .sframe) a local section
// symbol where GNU as puts it: right after the section symbol of the
// section made before it (.eh_frame's; with .debug_frame alone, that of
// the last section the source or dwarf2_finish made, even an SHF_MERGE
// one such as .debug_line_str: only those gas makes without a symbol,
// such as .ident's .comment, get theirs after all the others).
func (o *object) addSectionSymbol(symIdx, sec int) error {
	tab, err := o.loadSymtab(symIdx)
	if err != nil {
		return err
	}
	first := uint64(o.sects[symIdx].Info)
	if first == 0 || first > uint64(tab.n) {
		return fmt.Errorf("symbol table (section %d): first global symbol index %d out of range (%d symbols)", symIdx, first, tab.n)
	}
	pos := first
	for i := sec - 1; i > 0; i-- {
		if t := o.sects[i].Type; t == shtRel || t == shtRela || t == shtGroup {
			continue
		}
		if j, ok := tab.findSectionSymbols(o.hdr.order, map[uint32]bool{uint32(i): true})[uint32(i)]; ok && uint64(j) < first {
			pos = uint64(j) + 1
			break
		}
	}
	if err := o.checkNewSymbols(symIdx); err != nil {
		return err
	}
	if err := o.insertSectionSymbols(tab, []uint32{uint32(sec)}, pos, map[uint32]uint32{}); err != nil {
		return err
	}
	return o.renumberSymbols(symIdx, pos, 1, tab.n)
}
