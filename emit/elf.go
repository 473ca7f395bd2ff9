package emit

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
)

// SectionType is SHT_GNU_SFRAME, the ELF section type of .sframe since binutils 2.45.
const SectionType elf.SectionType = 0x6ffffff4

// ErrNoSFrame is the error for an ELF file without an SFrame section; the
// errors that say so wrap it.
var ErrNoSFrame = errors.New("no .sframe section")

// FindSection returns the SFrame section of f, or nil: the section named
// .sframe that has contents in the file (of type SHT_GNU_SFRAME, as
// binutils 2.45 and later write it, SHT_PROGBITS as older ones do, or any
// other: emit/verify reports a wrong type), else the first section of type
// SHT_GNU_SFRAME whatever its name. It is the one way every package finds
// the section.
func FindSection(f *elf.File) *elf.Section {
	for _, s := range f.Sections {
		if s.Name == ".sframe" && s.Type != elf.SHT_NOBITS {
			return s
		}
	}
	for _, s := range f.Sections {
		if s.Type == SectionType {
			return s
		}
	}
	return nil
}

// ReadELFSection finds the SFrame section of f (FindSection) and returns
// its contents, with its RELA relocations applied in a relocatable object,
// as objdump does; ErrNoSFrame when there is none.
func ReadELFSection(f *elf.File) (*elf.Section, []byte, error) {
	sec := FindSection(f)
	if sec == nil {
		return nil, nil, ErrNoSFrame
	}
	idx := 0
	for i, s := range f.Sections {
		if s == sec {
			idx = i
		}
	}
	data, err := SectionData(sec)
	if err != nil {
		return nil, nil, err
	}
	if f.Type != elf.ET_REL {
		return sec, data, nil
	}
	for _, rs := range f.Sections {
		if rs.Type == elf.SHT_RELA && int(rs.Info) == idx {
			if err := applyRela(f, rs, data); err != nil {
				return nil, nil, fmt.Errorf("section %s: %w", rs.Name, err)
			}
		}
	}
	return sec, data, nil
}

// applyRela applies the 64-bit PC-relative relocations gas emits for the
// FDE start fields (R_X86_64_PC64, R_AARCH64_PREL64, R_390_PC64; in
// version 2 the 32-bit R_X86_64_PC32, R_AARCH64_PREL32, R_390_PC32) to data:
// value S+A-P, every section at address 0 as in a relocatable object.
func applyRela(f *elf.File, rs *elf.Section, data []byte) error {
	if f.Class != elf.ELFCLASS64 {
		return fmt.Errorf("relocations of a %v file are not supported", f.Class)
	}
	var pc64, pc32 uint32
	switch f.Machine {
	case elf.EM_X86_64:
		pc64, pc32 = uint32(elf.R_X86_64_PC64), uint32(elf.R_X86_64_PC32)
	case elf.EM_AARCH64:
		pc64, pc32 = uint32(elf.R_AARCH64_PREL64), uint32(elf.R_AARCH64_PREL32)
	case elf.EM_S390:
		pc64, pc32 = uint32(elf.R_390_PC64), uint32(elf.R_390_PC32)
	default:
		return fmt.Errorf("relocations for machine %v are not supported", f.Machine)
	}
	rel, err := rs.Data()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("file offset %#x, size %#x: runs past the end of the file (%w)", rs.Offset, rs.FileSize, err)
	}
	if err != nil {
		return err
	}
	if len(rel)%24 != 0 {
		return fmt.Errorf("size %#x is not a multiple of 24", len(rel))
	}
	syms, err := elfSymbols(f)
	if err != nil {
		return err
	}
	bo := f.ByteOrder
	for p := 0; p < len(rel); p += 24 {
		off := bo.Uint64(rel[p:])
		info := bo.Uint64(rel[p+8:])
		addend := int64(bo.Uint64(rel[p+16:]))
		typ, symIdx := uint32(info), info>>32
		if typ == 0 { // R_*_NONE
			continue
		}
		size := uint64(8)
		switch typ {
		case pc64:
		case pc32:
			size = 4 // version 2's start fields (gas 2.41-2.45)
		default:
			return fmt.Errorf("offset %#x: unsupported relocation type %d", p, typ)
		}
		var s uint64
		if symIdx != 0 {
			if symIdx > uint64(len(syms)) {
				return fmt.Errorf("offset %#x: symbol index %d out of range (%d symbols)", p, symIdx, len(syms))
			}
			s = syms[symIdx-1].Value
		}
		if off > uint64(len(data)) || uint64(len(data))-off < size {
			return fmt.Errorf("offset %#x: relocation at %#x outside the section (%#x bytes)", p, off, len(data))
		}
		if size == 4 {
			bo.PutUint32(data[off:], uint32(s+uint64(addend)-off))
		} else {
			bo.PutUint64(data[off:], s+uint64(addend)-off)
		}
	}
	return nil
}

// SectionData returns the contents of the ELF section sec; a section
// running past the end of the file is reported as such instead of
// debug/elf's bare "EOF". Errors name the section.
func SectionData(sec *elf.Section) ([]byte, error) {
	data, err := sec.Data()
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("section %s (file offset %#x, size %#x) runs past the end of the file (%w)", sec.Name, sec.Offset, sec.FileSize, err)
	}
	return nil, fmt.Errorf("section %s: %w", sec.Name, err)
}

// elfSymbols returns f's symbol table (nil for none), saying when it or
// its string table runs past the end of the file.
func elfSymbols(f *elf.File) ([]elf.Symbol, error) {
	syms, err := f.Symbols()
	switch {
	case err == nil, errors.Is(err, elf.ErrNoSymbols):
		return syms, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("the symbol table or its string table runs past the end of the file (%w)", err)
	}
	return nil, err
}
