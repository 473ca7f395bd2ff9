package sframegen

import (
	"debug/elf"
	"fmt"
	"sort"

	"github.com/ianlancetaylor/demangle"
)

// Symbols names functions for reports: the demangled name of the function
// symbol at an address (in a relocatable object, at an offset of a
// section).
type Symbols struct {
	relocatable bool
	syms        []symbol // sorted by section, then value
}

type symbol struct {
	section elf.SectionIndex
	value   uint64
	name    string
}

// NewSymbols collects the function symbols of f (.symtab, else .dynsym).
func NewSymbols(f *elf.File) *Symbols {
	s := &Symbols{relocatable: f.Type == elf.ET_REL}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) != elf.STT_FUNC || sym.Name == "" {
			continue
		}
		sec := sym.Section
		if !s.relocatable {
			sec = 0
		}
		s.syms = append(s.syms, symbol{sec, sym.Value, sym.Name})
	}
	sort.SliceStable(s.syms, func(i, j int) bool {
		a, b := s.syms[i], s.syms[j]
		if a.section != b.section {
			return a.section < b.section
		}
		return a.value < b.value
	})
	return s
}

// Lookup returns the demangled name of the function symbol that starts at
// start (in a relocatable object, at offset start of section), and
// whether there is one.
func (s *Symbols) Lookup(section int, start uint64) (string, bool) {
	sec := elf.SectionIndex(0)
	if s.relocatable {
		sec = elf.SectionIndex(section)
	}
	i := sort.Search(len(s.syms), func(i int) bool {
		y := s.syms[i]
		return y.section > sec || y.section == sec && y.value >= start
	})
	if i < len(s.syms) && s.syms[i].section == sec && s.syms[i].value == start {
		return demangle.Filter(s.syms[i].name), true
	}
	return "", false
}

// Relocatable reports whether the symbols are an object's, whose values
// are section offsets.
func (s *Symbols) Relocatable() bool { return s.relocatable }

// name is Lookup's name, or "function at ADDRESS".
func (s *Symbols) name(section int, start uint64) string {
	if n, ok := s.Lookup(section, start); ok {
		return n
	}
	return fmt.Sprintf("function at %#x", start)
}
