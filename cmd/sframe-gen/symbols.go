package main

import (
	"debug/elf"
	"fmt"
	"sort"

	"github.com/ianlancetaylor/demangle"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// symbolizer names functions for reports: the demangled name of the symbol
// at an FDE's start, else the address.
type symbolizer struct {
	rel  bool
	syms []symbol // sorted by section, then value
}

type symbol struct {
	section elf.SectionIndex
	value   uint64
	name    string
}

// newSymbolizer collects the function symbols of f (.symtab, else .dynsym).
func newSymbolizer(f *elf.File) *symbolizer {
	s := &symbolizer{rel: f.Type == elf.ET_REL}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) != elf.STT_FUNC || sym.Name == "" {
			continue
		}
		sec := sym.Section
		if !s.rel {
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

// name returns the function name for an FDE, or its address.
func (s *symbolizer) name(f *cfi.FDE) string {
	sec := elf.SectionIndex(0)
	if s.rel {
		sec = elf.SectionIndex(f.Section)
	}
	i := sort.Search(len(s.syms), func(i int) bool {
		y := s.syms[i]
		return y.section > sec || y.section == sec && y.value >= f.Start
	})
	if i < len(s.syms) && s.syms[i].section == sec && s.syms[i].value == f.Start {
		return demangle.Filter(s.syms[i].name)
	}
	return fmt.Sprintf("function at %#x", f.Start)
}
