package elfcheck

import "debug/elf"

// shtGNUSFrame is SHT_GNU_SFRAME, the type of a .sframe section.
const shtGNUSFrame = 0x6ffffff4

// linksSection reports whether sh_link of a section of type t is a section
// index (gABI, GNU extensions). The check keeps its own tables, apart from
// elfpatch's, so that it does not share the code it checks.
func linksSection(t uint32) bool {
	switch elf.SectionType(t) {
	case elf.SHT_SYMTAB, elf.SHT_RELA, elf.SHT_REL, elf.SHT_GROUP, elf.SHT_SYMTAB_SHNDX,
		elf.SHT_HASH, elf.SHT_DYNAMIC, elf.SHT_DYNSYM,
		elf.SHT_GNU_HASH, elf.SHT_GNU_VERDEF, elf.SHT_GNU_VERNEED, elf.SHT_GNU_VERSYM:
		return true
	}
	return false
}

// dynTable reports whether sections of type t are tables the dynamic linker
// finds through the dynamic section only (DT_GNU_HASH, DT_HASH, DT_SYMTAB,
// DT_STRTAB, DT_VERSYM, DT_VERDEF, DT_VERNEED), which a patch may move.
func dynTable(t uint32) bool {
	switch elf.SectionType(t) {
	case elf.SHT_GNU_HASH, elf.SHT_HASH, elf.SHT_DYNSYM, elf.SHT_STRTAB,
		elf.SHT_GNU_VERSYM, elf.SHT_GNU_VERDEF, elf.SHT_GNU_VERNEED:
		return true
	}
	return false
}
