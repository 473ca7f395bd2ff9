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
// PT_INTERP), never code or the dynamic section.
func (f *file) movable(s *sect) bool {
	return s.Flags&shfAlloc != 0 && (s.Type == 7 /* SHT_NOTE */ || f.name(s) == ".interp")
}

// moveAfterPhdrs makes the program header table able to take extra more
// entries where it is, by moving the note and .interp sections that follow
// it to the free space at the end of the same PT_LOAD. The table then stays
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
	var cand []int
	for _, i := range after {
		s := &f.sects[i]
		if s.Off < tableEnd || !f.movable(s) || s.Addr-s.Off != load.Vaddr-load.Off || s.Off+s.Size > limit {
			limit = min(limit, s.Off)
			break
		}
		cand = append(cand, i)
	}
	if h := &f.hdr; h.shoff != 0 && h.shoff >= tableEnd && h.shoff < limit {
		limit = h.shoff
	}
	for k := 1; k <= len(cand); k++ {
		if b.tryMove(li, cand[:k], limit, cand, extra) {
			return true
		}
	}
	return false
}

// tryMove moves the sections block (a prefix of cand) and reports whether
// the table can then grow by extra entries in the bytes freed.
func (b *builder) tryMove(li int, block []int, limit uint64, cand []int, extra int) bool {
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
	for _, i := range block {
		b.moved[i] = d
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
// .symtab and .dynsym, reading the tables a piece at a time.
func (p *linkedPlan) fixSymbols(f *file, in io.ReaderAt) error {
	if len(p.moved) == 0 {
		return nil
	}
	o := f.hdr.order
	for i := range f.sects {
		s := &f.sects[i]
		if (s.Type != shtSymtab && s.Type != 11 /* SHT_DYNSYM */) || s.Size == 0 {
			continue
		}
		if s.Entsize != symSize || s.Size%symSize != 0 {
			return fmt.Errorf("symbol table (section %d): entry size %d and size %#x, want entries of %d bytes", i, s.Entsize, s.Size, symSize)
		}
		const step = 4096 * symSize
		buf := make([]byte, step)
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
				p.chunks = append(p.chunks, chunk{s.Off + off + e, ent})
			}
		}
	}
	return nil
}
