package elfpatch

import (
	"fmt"
	"sort"
)

// sectionSymbols returns, for every section named by relocs, the index of
// its STT_SECTION symbol in the symbol table (section symIdx), adding the
// missing ones as local symbols.
func (o *object) sectionSymbols(symIdx int, relocs []Reloc) (map[uint32]uint32, error) {
	bo := o.hdr.order
	st := &o.sects[symIdx]
	if st.Entsize != symSize || st.Size%symSize != 0 {
		return nil, fmt.Errorf("symbol table (section %d): entry size %d and size %#x, want entries of %d bytes", symIdx, st.Entsize, st.Size, symSize)
	}
	syms := o.bytes(symIdx)
	n := len(syms) / symSize
	xIdx := -1
	var xtab []byte
	for i := range o.sects {
		if o.sects[i].Type == shtSymtabShndx && int(o.sects[i].Link) == symIdx {
			xIdx = i
			xtab = o.bytes(i)
			if len(xtab) != n*4 {
				return nil, fmt.Errorf("extended section index table (section %d): size %#x, want %#x for %d symbols", i, len(xtab), n*4, n)
			}
		}
	}
	need := map[uint32]bool{}
	for _, r := range relocs {
		need[r.Section] = true
	}
	found := map[uint32]uint32{}
	for j := 1; j < n; j++ {
		e := syms[j*symSize:]
		if e[4]&0xf != sttSection {
			continue
		}
		shndx := uint32(bo.Uint16(e[6:]))
		if shndx == shnXindex && xtab != nil {
			shndx = bo.Uint32(xtab[j*4:])
		}
		if need[shndx] {
			if _, ok := found[shndx]; !ok {
				found[shndx] = uint32(j)
			}
		}
	}
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
	first := uint64(st.Info)
	if first == 0 || first > uint64(n) {
		return nil, fmt.Errorf("symbol table (section %d): first global symbol index %d out of range (%d symbols)", symIdx, first, n)
	}
	// The new symbols are unnamed: st_name 0, the empty string at the
	// start of every string table (gABI), which this one must have.
	if l := st.Link; int(l) < len(o.sects) {
		if names := o.bytes(int(l)); len(names) == 0 || names[0] != 0 {
			return nil, fmt.Errorf("symbol table (section %d): its string table, section %d, does not start with a NUL byte: a new section symbol would get a name", symIdx, l)
		}
	}
	for i := range o.sects {
		if o.sects[i].Type == 0x6fff4c03 && int(o.sects[i].Link) == symIdx {
			return nil, fmt.Errorf("section %d (%s, SHT_LLVM_ADDRSIG) holds symbol indices that adding section symbols would invalidate", i, o.name(&o.sects[i]))
		}
	}
	k := uint32(len(missing))
	added := make([]byte, len(missing)*symSize)
	addedX := make([]byte, len(missing)*4)
	for m, s := range missing {
		e := added[m*symSize:]
		e[4] = sttSection
		if s >= shnLoreserve {
			if xtab == nil {
				return nil, fmt.Errorf("section %d needs a section symbol but the object has no SHT_SYMTAB_SHNDX table", s)
			}
			bo.PutUint16(e[6:], shnXindex)
			bo.PutUint32(addedX[m*4:], s)
		} else {
			bo.PutUint16(e[6:], uint16(s))
		}
		found[s] = uint32(first) + uint32(m)
	}
	nsyms := make([]byte, 0, len(syms)+len(added))
	nsyms = append(nsyms, syms[:first*symSize]...)
	nsyms = append(nsyms, added...)
	nsyms = append(nsyms, syms[first*symSize:]...)
	o.content[symIdx] = nsyms
	st.Size = uint64(len(nsyms))
	st.Info += k
	if xIdx >= 0 {
		nx := make([]byte, 0, len(xtab)+len(addedX))
		nx = append(nx, xtab[:first*4]...)
		nx = append(nx, addedX...)
		nx = append(nx, xtab[first*4:]...)
		o.content[xIdx] = nx
		o.sects[xIdx].Size = uint64(len(nx))
	}
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
				return nil, fmt.Errorf("relocation section %d (%s): entry size %d and size %#x, want entries of %d bytes", i, o.name(s), s.Entsize, s.Size, esz)
			}
			rel := append([]byte(nil), o.bytes(i)...)
			for off := uint64(0); off < uint64(len(rel)); off += esz {
				info := bo.Uint64(rel[off+8:])
				sym := info >> 32
				if sym >= first {
					if sym >= uint64(n) {
						return nil, fmt.Errorf("relocation section %d (%s): entry at offset %#x names symbol %d, past the %d symbols", i, o.name(s), off, sym, n)
					}
					bo.PutUint64(rel[off+8:], (sym+uint64(k))<<32|info&0xffffffff)
				}
			}
			o.content[i] = rel
		}
	}
	return found, nil
}
