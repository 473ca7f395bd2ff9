package elfpatch

import (
	"bytes"
	"fmt"
	"io"
	"slices"
)

// Reloc is one relocation of the new .sframe section of a relocatable
// object, written to .rela.sframe as an Elf64_Rela entry.
type Reloc struct {
	// Offset is the byte offset in .sframe of the relocated field (for
	// SFrame version 3, the FDE start field at 28+16*i).
	Offset uint64
	// Type is the machine relocation type (R_X86_64_PC64 = 24,
	// R_AARCH64_PREL64 = 260, R_390_PC64 = 23).
	Type uint32
	// Section is the ELF index of the section holding the function; the
	// relocation's symbol is that section's STT_SECTION symbol.
	Section uint32
	// Addend is the function's offset in Section.
	Addend int64
}

// sectionNames of the sections PatchObject writes.
const (
	nameSFrame     = ".sframe"
	nameRelaSFrame = ".rela.sframe"
)

// PatchObject writes to out a copy of the relocatable object in (size bytes)
// with .sframe holding sframe and .rela.sframe holding relocs.
//
// The sections are made as GNU as --gsframe makes them: .sframe is
// SHT_GNU_SFRAME, SHF_ALLOC, aligned to 8; .rela.sframe is SHT_RELA,
// SHF_INFO_LINK, entry size 24, sh_link the symbol table, sh_info the index
// of .sframe. Existing sections keep their contents; sections named
// .sframe/.rela.sframe (or of type SHT_GNU_SFRAME, or SHT_RELA applying to
// it) are replaced in place. Each relocation's symbol is the STT_SECTION
// symbol of its section; a missing one is added as a local symbol,
// renumbering the symbol indices of every relocation and group section.
//
// An object BFD laid out (GNU as, ld -r, objcopy; recognized from its
// section numbering and file offsets) is written as BFD writes it, the new
// sections numbered where GNU as --gsframe numbers them (the later sections
// and every section index renumbered), with .sframe's section symbol where
// gas makes one: the patched object of GNU as is byte for byte the object
// as --gsframe makes. Any other object keeps its section indices, the new
// sections appended, and is laid out afresh (sections in their original
// file order, then the new ones, then the section header table). Either
// way the layout of an output is the output itself, so patching the output
// again with the same section gives identical bytes (docs/elfpatch.md).
//
// With no relocations, no .rela.sframe is added (an existing one is
// emptied). Nothing is written to out when an error is returned.
func PatchObject(in io.ReaderAt, size int64, out io.Writer, sframe []byte, relocs []Reloc) error {
	if size < 0 || size > maxTableBytes*4 {
		return fmt.Errorf("object size %d out of range", size)
	}
	data := make([]byte, size)
	if n, err := in.ReadAt(data, 0); int64(n) != size {
		return fmt.Errorf("reading object: %w", err)
	}
	b, err := patchObject(data, sframe, relocs)
	if err != nil {
		return err
	}
	if _, err := out.Write(b); err != nil {
		return fmt.Errorf("writing object: %w", err)
	}
	return nil
}

// PatchObjectBytes is [PatchObject] on an object held in memory: it
// returns the patched object (data is not modified).
func PatchObjectBytes(data, sframe []byte, relocs []Reloc) ([]byte, error) {
	return patchObject(data, sframe, relocs)
}

// object is a relocatable file being rewritten in memory.
type object struct {
	*file
	data []byte
	// content holds replaced section contents, by section index.
	content map[int][]byte
	// trailer is what the input has after everything its headers
	// describe (an appended signature, padding): written after the
	// section header table, so it is kept, and kept again by a second run.
	trailer []byte
	// origOff and origEnd are the input file offsets where the input's
	// sections start and end: the order in which contents are laid out,
	// and where a section without bytes goes (objectLayout).
	origOff, origEnd []uint64
}

func (o *object) bytes(i int) []byte {
	if c, ok := o.content[i]; ok {
		return c
	}
	s := &o.sects[i]
	if !s.hasContent() {
		return nil
	}
	return o.data[s.Off : s.Off+s.Size]
}

func patchObject(data, sframe []byte, relocs []Reloc) ([]byte, error) {
	f, err := parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	if err := checkObject(f, sframe, relocs); err != nil {
		return nil, err
	}
	o := &object{file: f, data: data, content: map[int][]byte{}, trailer: Trailer(data)}
	for i := range f.sects {
		s := &f.sects[i]
		o.origOff = append(o.origOff, s.Off)
		end := s.Off
		if s.hasContent() {
			end = satAdd(s.Off, s.Size)
		}
		o.origEnd = append(o.origEnd, end)
	}
	symIdx, err := symbolTable(f)
	if err != nil {
		return nil, err
	}
	var secSym map[uint32]uint32
	if len(relocs) > 0 {
		if symIdx < 0 {
			return nil, fmt.Errorf("object has no symbol table (.symtab)")
		}
		secSym, err = o.sectionSymbols(symIdx, relocs)
		if err != nil {
			return nil, err
		}
	}
	sfIdx, relIdx, err := sframeSections(f)
	if err != nil {
		return nil, err
	}
	tables, bfd := bfdLayout(f)
	if !bfd {
		o.addSFrame(sframe, relocs, secSym, symIdx, sfIdx, relIdx, -1)
		return o.layout(), nil
	}
	return o.writeBFD(tables, sframe, relocs, secSym, symIdx, sfIdx, relIdx)
}

// Trailer returns the bytes of the ELF object data after everything its
// headers describe: the ELF header, the program and section header tables
// and the contents of every section (nil for none, or for data that is not
// an object elfpatch reads). Kernel modules carry their signature there;
// PatchObject keeps these bytes at the end of the patched object.
func Trailer(data []byte) []byte {
	f, err := parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil
	}
	end := uint64(ehdrSize)
	if n := uint64(len(f.progs)); n > 0 {
		end = max(end, satAdd(f.hdr.phoff, n*phdrSize))
	}
	if n := uint64(len(f.sects)); n > 0 && f.hdr.shoff != 0 {
		end = max(end, satAdd(f.hdr.shoff, n*shdrSize))
	}
	for i := range f.sects {
		if s := &f.sects[i]; s.hasContent() {
			end = max(end, satAdd(s.Off, s.Size))
		}
	}
	if end >= uint64(len(data)) {
		return nil
	}
	return data[end:]
}

// checkObject refuses what patchObject cannot patch: not a relocatable
// object, no section headers, a compressed section without contents,
// relocations outside the object or the section.
func checkObject(f *file, sframe []byte, relocs []Reloc) error {
	if f.hdr.typ != etRel {
		return fmt.Errorf("ELF type %d is not ET_REL (relocatable object)", f.hdr.typ)
	}
	if len(f.sects) == 0 || f.shstrndx == 0 {
		return fmt.Errorf("object has no section headers or no section-name table")
	}
	for i := range f.sects {
		// Readers take the bytes at a compressed section's offset for
		// its compression header; an SHT_NOBITS or SHT_NULL section has
		// none (gABI: the flag cannot apply to SHT_NOBITS), and the new
		// layout moves it onto other bytes.
		if s := &f.sects[i]; i > 0 && (s.Type == shtNobits || s.Type == shtNull) && s.Flags&shfCompressed != 0 {
			kind := "SHT_NOBITS"
			if s.Type == shtNull {
				kind = "SHT_NULL"
			}
			return fmt.Errorf("section %d (%s) is %s but has the SHF_COMPRESSED flag", i, f.name(s), kind)
		}
	}
	for i, r := range relocs {
		if r.Section == 0 || uint64(r.Section) >= uint64(len(f.sects)) {
			return fmt.Errorf("relocation %d: section index %d out of range (%d sections)", i, r.Section, len(f.sects))
		}
		if r.Offset > uint64(len(sframe)) || uint64(len(sframe))-r.Offset < 8 {
			return fmt.Errorf("relocation %d: offset %#x outside the %d-byte .sframe", i, r.Offset, len(sframe))
		}
	}
	return nil
}

// symbolTable returns the index of the object's symbol table, -1 if none.
func symbolTable(f *file) (int, error) {
	symIdx := -1
	for i := range f.sects {
		if f.sects[i].Type == shtSymtab {
			if symIdx >= 0 {
				return 0, fmt.Errorf("object has two symbol tables (sections %d and %d)", symIdx, i)
			}
			symIdx = i
		}
	}
	if symIdx >= 0 {
		// The names live in the section sh_link names: the new layout
		// keeps only the contents of real sections (an SHT_NULL header's
		// fields mean nothing).
		if l := f.sects[symIdx].Link; l == 0 || int(l) >= len(f.sects) || f.sects[l].Type != shtStrtab {
			return 0, fmt.Errorf("symbol table (section %d): its string table, section %d, is not an SHT_STRTAB section", symIdx, l)
		}
	}
	return symIdx, nil
}

// sframeSections returns the indices of the object's .sframe and
// .rela.sframe, -1 for each one it does not have.
func sframeSections(f *file) (sfIdx, relIdx int, err error) {
	sfIdx, relIdx = -1, -1
	for i := range f.sects {
		s := &f.sects[i]
		n := f.name(s)
		if s.Type == shtGNUSFrame || (n == nameSFrame && s.Type != shtNull) {
			if sfIdx >= 0 {
				return 0, 0, fmt.Errorf("object has two SFrame sections (%d and %d)", sfIdx, i)
			}
			sfIdx = i
		}
	}
	for i := range f.sects {
		s := &f.sects[i]
		if (s.Type == shtRela || s.Type == shtRel) && (f.name(s) == nameRelaSFrame || (sfIdx > 0 && int(s.Info) == sfIdx)) {
			if relIdx >= 0 {
				return 0, 0, fmt.Errorf("object has two .rela.sframe sections (%d and %d)", relIdx, i)
			}
			relIdx = i
		}
	}
	return sfIdx, relIdx, nil
}

// setSection sets section i (-1: a new one, appended) to s with content
// and returns its index.
func (o *object) setSection(i int, s sect, content []byte) int {
	if i < 0 {
		i = len(o.sects)
		o.sects = append(o.sects, s)
	} else {
		o.sects[i] = s
	}
	o.content[i] = content
	return i
}

// addSFrame sets or appends .sframe (at sfIdx, -1 for a new one) and
// .rela.sframe (relIdx) with their contents, their names added to the
// section-name table as gas writes it.
//
// The names go at the end of the section-name table, or, when nameAt is
// not negative, at that offset, the names after it moving up.
func (o *object) addSFrame(sframe []byte, relocs []Reloc, secSym map[uint32]uint32, symIdx, sfIdx, relIdx, nameAt int) {
	f := o.file
	shstr := append([]byte(nil), f.shstrtab...)
	nameOff := func(name string) uint32 {
		if i := findName(shstr, name); i >= 0 {
			return uint32(i)
		}
		at := len(shstr)
		if nameAt >= 0 && nameAt < at {
			at = nameAt
			for i := range o.sects {
				if s := &o.sects[i]; int64(s.Name) >= int64(at) {
					s.Name += uint32(len(name) + 1)
				}
			}
		}
		shstr = slices.Concat(shstr[:at], []byte(name), []byte{0}, shstr[at:])
		return uint32(at)
	}
	if len(relocs) > 0 {
		nameOff(nameRelaSFrame) // so that .sframe shares its tail, as gas does
	}
	sfIdx = o.setSection(sfIdx, sect{Name: nameOff(nameSFrame), Type: shtGNUSFrame, Flags: shfAlloc, Size: uint64(len(sframe)), Addralign: 8}, sframe)
	if len(relocs) > 0 || relIdx >= 0 {
		rel := make([]byte, len(relocs)*relaSize)
		bo := f.hdr.order
		for i, r := range relocs {
			e := rel[i*relaSize:]
			bo.PutUint64(e[0:], r.Offset)
			bo.PutUint64(e[8:], uint64(secSym[r.Section])<<32|uint64(r.Type))
			bo.PutUint64(e[16:], uint64(r.Addend))
		}
		rs := sect{Name: nameOff(nameRelaSFrame), Type: shtRela, Flags: shfInfoLink, Size: uint64(len(rel)),
			Link: uint32(symIdx), Info: uint32(sfIdx), Addralign: 8, Entsize: relaSize}
		if symIdx < 0 {
			rs.Link = 0
		}
		o.setSection(relIdx, rs, rel)
	}
	o.sects[f.shstrndx].Size = uint64(len(shstr))
	o.content[f.shstrndx] = shstr
}
