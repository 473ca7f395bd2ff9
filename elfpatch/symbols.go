package elfpatch

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
)

// sectionSymbols returns, for every section named by relocs, the index of
// its STT_SECTION symbol in the symbol table (section symIdx), adding the
// missing ones as local symbols.
func (o *object) sectionSymbols(symIdx int, relocs []Reloc) (map[uint32]uint32, error) {
	tab, err := o.loadSymtab(symIdx)
	if err != nil {
		return nil, err
	}
	need := map[uint32]bool{}
	for _, r := range relocs {
		need[r.Section] = true
	}
	found := tab.findSectionSymbols(o.hdr.order, need)
	var missing []uint32
	for s := range need {
		if _, ok := found[s]; !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return found, nil
	}
	sort.Slice(missing, func(a, b int) bool { return missing[a] < missing[b] })

	// Insert the new local symbols before the first global one (index
	// sh_info) and renumber every reference to a later symbol.
	first := uint64(o.sects[symIdx].Info)
	if first == 0 || first > uint64(tab.n) {
		return nil, fmt.Errorf("symbol table (section %d): first global symbol index %d out of range (%d symbols)", symIdx, first, tab.n)
	}
	if err := o.checkNewSymbols(symIdx); err != nil {
		return nil, err
	}
	if err := o.insertSectionSymbols(tab, missing, first, found); err != nil {
		return nil, err
	}
	if err := o.renumberSymbols(symIdx, first, uint32(len(missing)), tab.n); err != nil {
		return nil, err
	}
	return found, nil
}

// symtab is a symbol table's entries and its extended section index
// table, if any.
type symtab struct {
	idx  int    // the symbol table's section
	syms []byte // its entries
	n    int    // how many
	xIdx int    // the SHT_SYMTAB_SHNDX section, or -1
	xtab []byte // its entries
}

// loadSymtab returns the symbol table in section symIdx, its sizes checked.
func (o *object) loadSymtab(symIdx int) (symtab, error) {
	st := &o.sects[symIdx]
	if st.Entsize != symSize || st.Size%symSize != 0 {
		return symtab{}, fmt.Errorf("symbol table (section %d): entry size %d and size %#x, want entries of %d bytes", symIdx, st.Entsize, st.Size, symSize)
	}
	tab := symtab{idx: symIdx, syms: o.bytes(symIdx), xIdx: -1}
	tab.n = len(tab.syms) / symSize
	for i := range o.sects {
		if o.sects[i].Type == shtSymtabShndx && int(o.sects[i].Link) == symIdx {
			tab.xIdx = i
			tab.xtab = o.bytes(i)
			if len(tab.xtab) != tab.n*4 {
				return symtab{}, fmt.Errorf("extended section index table (section %d): size %#x, want %#x for %d symbols", i, len(tab.xtab), tab.n*4, tab.n)
			}
		}
	}
	return tab, nil
}

// findSectionSymbols returns the index of the first STT_SECTION symbol of
// each section in need that has one.
func (tab symtab) findSectionSymbols(bo binary.ByteOrder, need map[uint32]bool) map[uint32]uint32 {
	found := map[uint32]uint32{}
	for j := 1; j < tab.n; j++ {
		e := tab.syms[j*symSize:]
		if e[4]&0xf != sttSection {
			continue
		}
		shndx := uint32(bo.Uint16(e[6:]))
		if shndx == shnXindex && tab.xtab != nil {
			shndx = bo.Uint32(tab.xtab[j*4:])
		}
		if need[shndx] {
			if _, ok := found[shndx]; !ok {
				found[shndx] = uint32(j)
			}
		}
	}
	return found
}

// checkNewSymbols says why symbols cannot be added to the symbol table in
// section symIdx, if they cannot.
func (o *object) checkNewSymbols(symIdx int) error {
	// The new symbols are unnamed: st_name 0, the empty string at the
	// start of every string table (gABI), which this one must have.
	if l := o.sects[symIdx].Link; int(l) < len(o.sects) {
		if names := o.bytes(int(l)); len(names) == 0 || names[0] != 0 {
			return fmt.Errorf("symbol table (section %d): its string table, section %d, does not start with a NUL byte: a new section symbol would get a name", symIdx, l)
		}
	}
	for i := range o.sects {
		if o.sects[i].Type == 0x6fff4c03 && int(o.sects[i].Link) == symIdx {
			return fmt.Errorf("section %d (%s, SHT_LLVM_ADDRSIG) holds symbol indices that adding section symbols would invalidate", i, o.name(&o.sects[i]))
		}
	}
	return nil
}

// insertSectionSymbols inserts a local STT_SECTION symbol for each section
// of missing at index first of tab (and its extended index table), and
// records each one's index in found.
func (o *object) insertSectionSymbols(tab symtab, missing []uint32, first uint64, found map[uint32]uint32) error {
	bo := o.hdr.order
	added := make([]byte, len(missing)*symSize)
	addedX := make([]byte, len(missing)*4)
	for m, s := range missing {
		e := added[m*symSize:]
		e[4] = sttSection
		if s >= shnLoreserve {
			if tab.xtab == nil {
				return fmt.Errorf("section %d needs a section symbol but the object has no SHT_SYMTAB_SHNDX table", s)
			}
			bo.PutUint16(e[6:], shnXindex)
			bo.PutUint32(addedX[m*4:], s)
		} else {
			bo.PutUint16(e[6:], uint16(s))
		}
		found[s] = uint32(first) + uint32(m)
	}
	nsyms := slices.Concat(tab.syms[:first*symSize], added, tab.syms[first*symSize:])
	o.content[tab.idx] = nsyms
	o.sects[tab.idx].Size = uint64(len(nsyms))
	o.sects[tab.idx].Info += uint32(len(missing))
	if tab.xIdx >= 0 {
		nx := slices.Concat(tab.xtab[:first*4], addedX, tab.xtab[first*4:])
		o.content[tab.xIdx] = nx
		o.sects[tab.xIdx].Size = uint64(len(nx))
	}
	return nil
}

// renumberSymbols adds k to every reference to a symbol at or past first
// of the symbol table in section symIdx (of n symbols before k were
// inserted): section groups' signatures and relocations.
func (o *object) renumberSymbols(symIdx int, first uint64, k uint32, n int) error {
	bo := o.hdr.order
	for i := range o.sects {
		s := &o.sects[i]
		if int(s.Link) != symIdx {
			continue
		}
		switch s.Type {
		case shtGroup:
			if uint64(s.Info) >= first {
				s.Info += k
			}
		case shtRela, shtRel:
			esz := uint64(relaSize)
			if s.Type == shtRel {
				esz = 16
			}
			if s.Entsize != esz || s.Size%esz != 0 {
				return fmt.Errorf("relocation section %d (%s): entry size %d and size %#x, want entries of %d bytes", i, o.name(s), s.Entsize, s.Size, esz)
			}
			rel := append([]byte(nil), o.bytes(i)...)
			for off := uint64(0); off < uint64(len(rel)); off += esz {
				info := bo.Uint64(rel[off+8:])
				sym := info >> 32
				if sym >= first {
					if sym >= uint64(n) {
						return fmt.Errorf("relocation section %d (%s): entry at offset %#x names symbol %d, past the %d symbols", i, o.name(s), off, sym, n)
					}
					bo.PutUint64(rel[off+8:], (sym+uint64(k))<<32|info&0xffffffff)
				}
			}
			o.content[i] = rel
		}
	}
	return nil
}
