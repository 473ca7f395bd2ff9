package target

import (
	"debug/elf"
	"fmt"
	"sort"

	"github.com/ianlancetaylor/demangle"
)

// Symbols names the functions of an ELF file by its function symbols
// (.symtab, else .dynsym), demangled: the function starting at an address
// (Lookup, Name: reports on functions) or holding one (Holding: stack
// frames). In a relocatable object an address is an offset in a section.
type Symbols struct {
	relocatable bool
	syms        []symbol  // sorted by section, then value
	sections    []section // to name an address no symbol starts at
}

type symbol struct {
	section    elf.SectionIndex // 0 but in a relocatable object
	value      uint64
	size       uint64
	name       string
	unnamed    bool
	undefValue bool // value 0: no address (an undefined symbol)
}

// section is what Name needs of a section: an object's sections by index,
// an executable's or library's loaded ones by address.
type section struct {
	name       string
	addr, size uint64
	loaded     bool // SHF_ALLOC, not SHT_NOBITS
}

// NewSymbols collects the function symbols of f (.symtab, else .dynsym).
func NewSymbols(f *elf.File) *Symbols {
	s := &Symbols{relocatable: f.Type == elf.ET_REL}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) != elf.STT_FUNC {
			continue
		}
		sec := sym.Section
		if !s.relocatable {
			sec = 0
		}
		s.syms = append(s.syms, symbol{section: sec, value: sym.Value, size: sym.Size, name: sym.Name,
			unnamed: sym.Name == "", undefValue: sym.Value == 0})
	}
	sort.SliceStable(s.syms, func(i, j int) bool {
		a, b := s.syms[i], s.syms[j]
		if a.section != b.section {
			return a.section < b.section
		}
		return a.value < b.value
	})
	for _, sec := range f.Sections {
		s.sections = append(s.sections, section{sec.Name, sec.Addr, sec.Size, sec.Flags&elf.SHF_ALLOC != 0 && sec.Type != elf.SHT_NOBITS})
	}
	return s
}

// Lookup returns the demangled name of the function symbol that starts at
// start (in a relocatable object, at offset start of section), and
// whether there is one.
func (s *Symbols) Lookup(section int, start uint64) (string, bool) {
	if s == nil {
		return "", false
	}
	sec := elf.SectionIndex(0)
	if s.relocatable {
		sec = elf.SectionIndex(section)
	}
	i := sort.Search(len(s.syms), func(i int) bool {
		y := s.syms[i]
		return y.section > sec || y.section == sec && y.value >= start
	})
	for ; i < len(s.syms) && s.syms[i].section == sec && s.syms[i].value == start; i++ {
		if !s.syms[i].unnamed {
			return demangle.Filter(s.syms[i].name), true
		}
	}
	return "", false
}

// Name is Lookup's name, else where start is: "function at .plt+0x10"
// (the section holding it, in an object the section itself), else
// "function at ADDRESS".
func (s *Symbols) Name(section int, start uint64) string {
	if name, ok := s.Lookup(section, start); ok {
		return name
	}
	if s == nil {
		return fmt.Sprintf("function at %#x", start)
	}
	if s.relocatable {
		if section > 0 && section < len(s.sections) {
			return fmt.Sprintf("function at %s+%#x", s.sections[section].name, start)
		}
		return fmt.Sprintf("function at section %d+%#x", section, start)
	}
	for _, sec := range s.sections {
		if sec.loaded && start >= sec.addr && start-sec.addr < sec.size {
			if start == sec.addr {
				return "function at " + sec.name
			}
			return fmt.Sprintf("function at %s+%#x", sec.name, start-sec.addr)
		}
	}
	return fmt.Sprintf("function at %#x", start)
}

// Holding returns the demangled name of the function holding addr (a
// link-time address of an executable or shared library) and addr's offset
// in it, or "" when no function symbol holds it. Of symbols at the same
// address (aliases), one whose size covers addr is preferred; a symbol of
// size 0 holds every address up to the next one.
func (s *Symbols) Holding(addr uint64) (string, uint64) {
	if s == nil || s.relocatable {
		return "", 0
	}
	i := sort.Search(len(s.syms), func(i int) bool { return s.syms[i].value > addr }) - 1
	for ; i >= 0 && !s.syms[i].undefValue; i-- {
		y := s.syms[i]
		if y.size == 0 || addr < y.value+y.size {
			return demangle.Filter(y.name), addr - y.value
		}
		if i > 0 && s.syms[i-1].value != y.value {
			break
		}
	}
	return "", 0
}
