package elfpatch

import "fmt"

// shfLinkOrder is SHF_LINK_ORDER: sh_link names a section.
const shfLinkOrder = 0x80

// moveNew moves the sections appended to the object (indices from on) to
// index at, the sections from at up moving after them, and renumbers every
// section index the object holds: sh_link and sh_info, the members of
// section groups, the st_shndx of symbols, and the section-name table's
// index.
func (o *object) moveNew(from, at int) error {
	n := len(o.sects)
	if at >= from || from >= n {
		return nil
	}
	k := n - from
	perm := make([]int, n) // old index -> new index
	for i := range perm {
		switch {
		case i < at:
			perm[i] = i
		case i < from:
			perm[i] = i + k
		default:
			perm[i] = at + i - from
		}
	}
	return o.renumber(perm)
}

// renumber gives section i the index perm[i] (a permutation keeping 0).
func (o *object) renumber(perm []int) error {
	n := len(o.sects)
	if n >= shnLoreserve {
		return fmt.Errorf("renumbering %d sections: extended section numbering", n)
	}
	mapIdx := func(x uint32) uint32 {
		if x > 0 && int64(x) < int64(n) {
			return uint32(perm[x])
		}
		return x
	}
	bo := o.hdr.order
	// Section contents that hold section indices: group members, symbols.
	for i := range o.sects {
		s := &o.sects[i]
		switch s.Type {
		case shtGroup:
			g := append([]byte(nil), o.bytes(i)...)
			for off := 4; off+4 <= len(g); off += 4 {
				bo.PutUint32(g[off:], mapIdx(bo.Uint32(g[off:])))
			}
			o.content[i] = g
		case shtSymtab:
			syms := append([]byte(nil), o.bytes(i)...)
			for off := 0; off+symSize <= len(syms); off += symSize {
				if x := bo.Uint16(syms[off+6:]); x < shnLoreserve {
					bo.PutUint16(syms[off+6:], uint16(mapIdx(uint32(x))))
				}
			}
			o.content[i] = syms
		case shtSymtabShndx:
			xs := append([]byte(nil), o.bytes(i)...)
			for off := 0; off+4 <= len(xs); off += 4 {
				bo.PutUint32(xs[off:], mapIdx(bo.Uint32(xs[off:])))
			}
			o.content[i] = xs
		}
	}
	sects := make([]sect, n)
	content := make(map[int][]byte, len(o.content))
	origOff := make([]uint64, n)
	origEnd := make([]uint64, n)
	for i := range o.sects {
		s := o.sects[i]
		if linksSection(s.Type) || s.Flags&shfLinkOrder != 0 {
			s.Link = mapIdx(s.Link)
		}
		if s.Type == shtRel || s.Type == shtRela || s.Flags&shfInfoLink != 0 {
			s.Info = mapIdx(s.Info)
		}
		j := perm[i]
		sects[j] = s
		if c, ok := o.content[i]; ok {
			content[j] = c
		}
		origOff[j], origEnd[j] = ^uint64(0), ^uint64(0)
		if i < len(o.origOff) {
			origOff[j], origEnd[j] = o.origOff[i], o.origEnd[i]
		}
	}
	o.sects, o.content, o.origOff, o.origEnd = sects, content, origOff, origEnd
	o.shstrndx = perm[o.shstrndx]
	return nil
}
