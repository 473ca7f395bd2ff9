package elfpatch

import (
	"fmt"
	"io"
	"sort"
)

// maxMoveBlock bounds the bytes moveAfterPhdrs relocates.
const maxMoveBlock = 64 << 10

// movable reports whether section s may change address: only program
// headers refer to notes and to .interp (PT_NOTE, PT_GNU_PROPERTY,
// PT_INTERP), never code; only entries of the dynamic section refer to the
// dynamic linker's tables (hash tables, .dynsym, .dynstr, symbol versions:
// see dynTables), and those entries move with them.
func (f *file) movable(s *sect, dyn dynRefs) bool {
	if s.Flags&shfAlloc == 0 {
		return false
	}
	if s.Type == 7 /* SHT_NOTE */ || f.name(s) == ".interp" {
		return true
	}
	return dynTable(s.Type) && len(dyn[s.Addr]) > 0
}

// dynTable reports whether sections of type t are tables the dynamic linker
// finds through the dynamic section only (DT_GNU_HASH, DT_HASH, DT_SYMTAB,
// DT_STRTAB, DT_VERSYM, DT_VERDEF, DT_VERNEED): nothing in code or data
// holds their addresses, and their contents hold none.
func dynTable(t uint32) bool {
	switch t {
	case 0x6ffffff6, 5, 11, shtStrtab, 0x6fffffff, 0x6ffffffd, 0x6ffffffe:
		// SHT_GNU_HASH, SHT_HASH, SHT_DYNSYM, SHT_STRTAB (.dynstr),
		// SHT_GNU_versym, SHT_GNU_verdef, SHT_GNU_verneed
		return true
	}
	return false
}

// dynRefs maps an address to the file offsets of the dynamic entries whose
// value is that address and whose tag names one of the tables dynTable
// allows to move.
type dynRefs map[uint64][]uint64

// dynamicRefs reads the entries of the PT_DYNAMIC segment (nil if there is
// none or it cannot be read: then no dynamic table moves).
func (f *file) dynamicRefs(in io.ReaderAt) dynRefs {
	const entSize = 16
	for _, p := range f.progs {
		if p.Type != 2 /* PT_DYNAMIC */ || p.Filesz == 0 || p.Filesz > 1<<20 {
			continue
		}
		buf := make([]byte, p.Filesz)
		if _, err := in.ReadAt(buf, int64(p.Off)); err != nil {
			return nil
		}
		refs := dynRefs{}
		o := f.hdr.order
		for e := uint64(0); e+entSize <= p.Filesz; e += entSize {
			tag, val := o.Uint64(buf[e:]), o.Uint64(buf[e+8:])
			switch tag {
			case 0: // DT_NULL
				return refs
			case 0x6ffffef5, 4, 6, 5, 0x6ffffff0, 0x6ffffffc, 0x6ffffffe:
				// DT_GNU_HASH, DT_HASH, DT_SYMTAB, DT_STRTAB, DT_VERSYM,
				// DT_VERDEF, DT_VERNEED
				refs[val] = append(refs[val], p.Off+e+8)
			}
		}
		return refs
	}
	return nil
}

// moveAfterPhdrs makes the program header table able to take extra more
// entries where it is, by moving the sections that follow it (notes,
// .interp, the dynamic linker's tables: movable) to the free space at the
// end of the same PT_LOAD. The table then stays
// right after the ELF header in the first PT_LOAD, where every loader finds
// it and where BFD (strip, objcopy) keeps it. A moved note that lands right
// after a PT_NOTE of the same alignment joins it, which frees that note's
// own program header (ld keeps notes of equal alignment in one PT_NOTE too).
func (b *builder) moveAfterPhdrs(extra int) bool {
	f := b.f
	phoff := f.hdr.phoff
	li := b.pl.loads[0]
	load := &f.progs[li]
	tableEnd := phoff + uint64(len(f.progs))*phdrSize
	if phoff < load.Off || tableEnd > load.Off+load.Filesz || load.Filesz != load.Memsz {
		return false
	}
	// The movable sections right after the table, in file order, up to the
	// first other content.
	var after []int
	for i := range f.sects {
		s := &f.sects[i]
		if s.hasContent() && s.Off+s.Size > tableEnd && s.Off < load.Off+load.Filesz {
			after = append(after, i)
		}
	}
	sort.Slice(after, func(x, y int) bool { return f.sects[after[x]].Off < f.sects[after[y]].Off })
	limit := load.Off + load.Filesz // first byte not free to overwrite
	dyn := f.dynamicRefs(b.pl.in)
	var cand []int
	for _, i := range after {
		s := &f.sects[i]
		if s.Off < tableEnd || !f.movable(s, dyn) || s.Addr-s.Off != load.Vaddr-load.Off || s.Off+s.Size > limit {
			limit = min(limit, s.Off)
			break
		}
		cand = append(cand, i)
	}
	if h := &f.hdr; h.shoff != 0 && h.shoff >= tableEnd && h.shoff < limit {
		limit = h.shoff
	}
	for k := 1; k <= len(cand); k++ {
		if b.tryMove(li, cand[:k], limit, cand, extra, dyn) {
			return true
		}
	}
	return false
}

// tryMove moves the sections block (a prefix of cand) and reports whether
// the table can then grow by extra entries in the bytes freed.
func (b *builder) tryMove(li int, block []int, limit uint64, cand []int, extra int, dyn dynRefs) bool {
	f := b.f
	load := &f.progs[li]
	start := f.sects[block[0]].Off
	var end, align uint64 = 0, 1
	for _, i := range block {
		s := &f.sects[i]
		end = max(end, s.Off+s.Size)
		align = max(align, s.Addralign)
	}
	freeEnd := limit
	if len(block) < len(cand) {
		freeEnd = f.sects[cand[len(block)]].Off
	}
	if end-start > maxMoveBlock || end > freeEnd {
		return false
	}
	// Program headers over the block move with it; any other one touching
	// the bytes that change must not exist.
	tableEnd := f.hdr.phoff + uint64(len(f.progs))*phdrSize
	var inside []int
	for i := range f.progs {
		p := &f.progs[i]
		if p.Type == ptLoad || p.Type == ptPhdr || p.Filesz == 0 || p.Off >= freeEnd || p.Off+p.Filesz <= tableEnd {
			continue
		}
		if p.Off < start || p.Off+p.Filesz > end {
			return false
		}
		inside = append(inside, i)
	}
	// Destination: the free space after the load, keeping every section's
	// alignment (the block moves by a multiple of the largest).
	filesz, ok := b.grown[li]
	if !ok {
		filesz = load.Filesz
	}
	cur := load.Off + filesz
	dst := alignUp(cur-start%align, align) + start%align
	if dst < cur {
		dst += align
	}
	d := dst - start
	// Notes joining a PT_NOTE that ends where they land.
	merge := map[int]int{} // moved PT_NOTE -> PT_NOTE it joins
	for _, i := range inside {
		p := &f.progs[i]
		if p.Type != 4 {
			continue
		}
		for j := range f.progs {
			q := &f.progs[j]
			if q.Type == 4 && j != i && q.Align == p.Align && q.Off+q.Filesz == p.Off+d && q.Vaddr+q.Memsz == p.Vaddr+d && q.Filesz == q.Memsz {
				merge[i] = j
			}
		}
	}
	need := uint64(len(f.progs)-len(merge)+extra) * phdrSize
	if f.hdr.phoff+need > freeEnd {
		return false
	}
	data := make([]byte, end-start)
	if _, err := b.pl.in.ReadAt(data, int64(start)); err != nil {
		return false
	}
	if _, _, ok := b.grow(li, dst+(end-start)-cur, 1); !ok {
		return false
	}
	o := f.hdr.order
	for _, i := range block {
		b.moved[i] = d
		// The dynamic entries that point at a moved table follow it.
		addr := f.sects[i].Addr
		for _, off := range dyn[addr] {
			v := make([]byte, 8)
			o.PutUint64(v, addr+d)
			b.plan.chunks = append(b.plan.chunks, chunk{off, v})
		}
	}
	for _, i := range inside {
		if j, ok := merge[i]; ok {
			b.dropProgs[i] = true
			b.noteGrow[j] += f.progs[i].Filesz
			continue
		}
		b.movedProgs[i] = d
	}
	b.phDropped = len(merge)
	b.plan.chunks = append(b.plan.chunks, chunk{start, make([]byte, end-start)}, chunk{dst, data})
	b.layout.MovedSections = len(block)
	b.layout.MergedNotes = len(merge)
	return true
}

// fixSymbols moves the values of symbols defined in moved sections, in
// .symtab and .dynsym (where it is now, when it moved itself), reading the
// tables a piece at a time.
func (p *linkedPlan) fixSymbols(f *file, in io.ReaderAt) error {
	if len(p.moved) == 0 {
		return nil
	}
	o := f.hdr.order
	const step = 4096 * symSize
	var buf []byte // up to step bytes of a table, read at a time
	for i := range f.sects {
		s := &f.sects[i]
		if (s.Type != shtSymtab && s.Type != 11 /* SHT_DYNSYM */) || s.Size == 0 {
			continue
		}
		if s.Entsize != symSize || s.Size%symSize != 0 {
			return fmt.Errorf("symbol table (section %d): entry size %d and size %#x, want entries of %d bytes", i, s.Entsize, s.Size, symSize)
		}
		if uint64(len(buf)) < min(step, s.Size) {
			buf = make([]byte, min(step, s.Size))
		}
		for off := uint64(0); off < s.Size; off += step {
			n := min(step, s.Size-off)
			if _, err := in.ReadAt(buf[:n], int64(s.Off+off)); err != nil {
				return fmt.Errorf("reading symbol table (section %d) at offset %#x: %w", i, s.Off+off, err)
			}
			for e := uint64(0); e < n; e += symSize {
				shndx := o.Uint16(buf[e+6:])
				d, ok := p.moved[int(shndx)]
				if !ok || shndx == 0 || shndx >= shnLoreserve {
					continue
				}
				ent := append([]byte(nil), buf[e:e+symSize]...)
				o.PutUint64(ent[8:], o.Uint64(ent[8:])+d)
				p.chunks = append(p.chunks, chunk{s.Off + p.moved[i] + off + e, ent})
			}
		}
	}
	return nil
}
