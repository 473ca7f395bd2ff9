package cfi

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
)

// relocations reads the relocations that apply to sec in a relocatable
// object (.rela.eh_frame, .rela.debug_frame, or the REL forms), keyed by
// the offset they patch. Only the relocation types CFI uses are accepted:
// 32- and 64-bit absolute and PC-relative ones of x86-64, AArch64, s390x
// (and i386 and 32-bit Arm REL). Each value is S + A: for a section symbol
// or a symbol defined in a section, its st_value plus the addend, relative
// to that section (its index st_shndx).
func relocations(f *elf.File, sec *elf.Section) (map[uint64]relocation, error) {
	idx := -1
	for i, s := range f.Sections {
		if s == sec {
			idx = i
		}
	}
	var rs []*elf.Section
	for _, s := range f.Sections {
		if (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && int(s.Info) == idx {
			rs = append(rs, s)
		}
	}
	m := map[uint64]relocation{}
	if len(rs) == 0 {
		return m, nil
	}
	syms, err := f.Symbols()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("reading symbols: the symbol table or its string table runs past the end of the file (%w)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading symbols: %w", err)
	}
	var secData []byte // for REL in-place addends
	for _, rs := range rs {
		data, err := sectionData(rs)
		if err != nil {
			return nil, err
		}
		rela := rs.Type == elf.SHT_RELA
		if !rela && secData == nil {
			if secData, err = sectionData(sec); err != nil {
				return nil, err
			}
		}
		var entSize int
		switch {
		case f.Class == elf.ELFCLASS64 && rela:
			entSize = 24
		case f.Class == elf.ELFCLASS64:
			entSize = 16
		case rela:
			entSize = 12
		default:
			entSize = 8
		}
		if len(data)%entSize != 0 {
			return nil, fmt.Errorf("%s: size %d is not a multiple of %d", rs.Name, len(data), entSize)
		}
		for i := 0; i < len(data); i += entSize {
			var off, info uint64
			var addend int64
			var symIdx uint64
			var typ uint32
			e := data[i : i+entSize]
			if f.Class == elf.ELFCLASS64 {
				off, info = f.ByteOrder.Uint64(e), f.ByteOrder.Uint64(e[8:])
				symIdx, typ = info>>32, uint32(info)
				if rela {
					addend = int64(f.ByteOrder.Uint64(e[16:]))
				}
			} else {
				off, info = uint64(f.ByteOrder.Uint32(e)), uint64(f.ByteOrder.Uint32(e[4:]))
				symIdx, typ = info>>8, uint32(info&0xff)
				if rela {
					addend = int64(int32(f.ByteOrder.Uint32(e[8:])))
				}
			}
			size := relocSize(f.Machine, typ)
			if size == 0 {
				if typ != 0 { // not R_*_NONE
					m[off] = relocation{shndx: -1, badType: typ}
				}
				continue
			}
			if !rela {
				if off+uint64(size) > uint64(len(secData)) || off+uint64(size) < off {
					return nil, fmt.Errorf("%s: relocation %d at offset %#x past the section", rs.Name, i/entSize, off)
				}
				if size == 4 {
					addend = int64(int32(f.ByteOrder.Uint32(secData[off:])))
				} else {
					addend = int64(f.ByteOrder.Uint64(secData[off:]))
				}
			}
			r := relocation{shndx: -1}
			if symIdx == 0 {
				r.value = uint64(addend)
				r.shndx = 0
			} else if symIdx-1 < uint64(len(syms)) {
				s := syms[symIdx-1]
				if s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE {
					r.shndx = int(s.Section)
				}
				r.value = s.Value + uint64(addend)
			}
			if size == 4 {
				r.value &= 0xffffffff
			}
			m[off] = r
		}
	}
	return m, nil
}

// relocSize returns the size in bytes of the field a relocation type of
// machine patches, for the types CFI uses; 0 for others.
func relocSize(m elf.Machine, typ uint32) int {
	return relocSizes[relocType{m, typ}]
}

// relocType is a relocation type of one machine.
type relocType struct {
	machine elf.Machine
	typ     uint32
}

// relocSizes are the sizes of the fields patched by the relocation types
// CFI uses: PC-relative and absolute, 4 and 8 bytes.
var relocSizes = map[relocType]int{
	{elf.EM_X86_64, uint32(elf.R_X86_64_PC32)}:     4,
	{elf.EM_X86_64, uint32(elf.R_X86_64_32)}:       4,
	{elf.EM_X86_64, uint32(elf.R_X86_64_32S)}:      4,
	{elf.EM_X86_64, uint32(elf.R_X86_64_PC64)}:     8,
	{elf.EM_X86_64, uint32(elf.R_X86_64_64)}:       8,
	{elf.EM_AARCH64, uint32(elf.R_AARCH64_PREL32)}: 4,
	{elf.EM_AARCH64, uint32(elf.R_AARCH64_ABS32)}:  4,
	{elf.EM_AARCH64, uint32(elf.R_AARCH64_PREL64)}: 8,
	{elf.EM_AARCH64, uint32(elf.R_AARCH64_ABS64)}:  8,
	{elf.EM_S390, uint32(elf.R_390_PC32)}:          4,
	{elf.EM_S390, uint32(elf.R_390_32)}:            4,
	{elf.EM_S390, uint32(elf.R_390_PC64)}:          8,
	{elf.EM_S390, uint32(elf.R_390_64)}:            8,
	{elf.EM_386, uint32(elf.R_386_PC32)}:           4,
	{elf.EM_386, uint32(elf.R_386_32)}:             4,
	{elf.EM_ARM, uint32(elf.R_ARM_REL32)}:          4,
	{elf.EM_ARM, uint32(elf.R_ARM_ABS32)}:          4,
	{elf.EM_ARM, uint32(elf.R_ARM_PREL31)}:         4,
}
