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

// moveAfterPhdrs makes the program header table able to grow to sz bytes
// where it is, by moving the note and .interp sections that follow it to
// the free space at the end of the same PT_LOAD. The table then stays right
// after the ELF header in the first PT_LOAD, where every loader finds it
// and where BFD (strip, objcopy) keeps it.
func (b *builder) moveAfterPhdrs(sz uint64) bool {
	f := b.f
	phoff := f.hdr.phoff
	li := -1
	for _, i := range b.pl.loads {
		p := &f.progs[i]
		if phoff >= p.Off && phoff < p.Off+p.Filesz {
			li = i
			break
		}
	}
	if li < 0 || li != b.pl.loads[0] {
		return false
	}
	load := &f.progs[li]
	want := phoff + sz
	if want > load.Off+load.Filesz {
		return false
	}
	// Sections after the table, in file order.
	var after []int
	for i := range f.sects {
		s := &f.sects[i]
		if s.hasContent() && s.Off+s.Size > phoff+uint64(len(f.progs))*phdrSize && s.Off < load.Off+load.Filesz {
			after = append(after, i)
		}
	}
	sort.Slice(after, func(x, y int) bool { return f.sects[after[x]].Off < f.sects[after[y]].Off })
	var block []int
	var start, end, align uint64 = 0, 0, 1
	for _, i := range after {
		s := &f.sects[i]
		if s.Off >= want && len(block) > 0 {
			break
		}
		if !f.movable(s) || s.Off < phoff+uint64(len(f.progs))*phdrSize || s.Addr-s.Off != load.Vaddr-load.Off {
			return false
		}
		if len(block) == 0 {
			start = s.Off
		}
		block = append(block, i)
		end = max(end, s.Off+s.Size)
		align = max(align, s.Addralign)
	}
	if len(block) == 0 || end-start > maxMoveBlock || end > load.Off+load.Filesz {
		return false
	}
	// Everything else in the bytes the table grows into or the block
	// leaves must be part of the block.
	tableEnd := phoff + uint64(len(f.progs))*phdrSize
	lo, hi := tableEnd, max(want, end)
	for i := range f.sects {
		s := &f.sects[i]
		in := false
		for _, j := range block {
			in = in || i == j
		}
		if !in && s.hasContent() && s.Off < hi && s.Off+s.Size > lo {
			return false
		}
	}
	var inside []int
	for i := range f.progs {
		p := &f.progs[i]
		if p.Type == ptLoad || p.Type == ptPhdr || p.Filesz == 0 || p.Off >= hi || p.Off+p.Filesz <= lo {
			continue
		}
		if p.Off < start || p.Off+p.Filesz > end {
			return false
		}
		inside = append(inside, i)
	}
	if h := &f.hdr; h.shoff != 0 && h.shoff < hi && h.shoff+uint64(len(f.sects))*shdrSize > lo {
		return false
	}
	// Destination: the free space after the load, keeping every section's
	// alignment (the block moves by a multiple of the largest).
	filesz, ok := b.grown[li]
	if !ok {
		filesz = load.Filesz
	}
	dst := alignUp(load.Off+filesz, align) + start%align
	if dst < load.Off+filesz {
		dst += align
	}
	data := make([]byte, end-start)
	if _, err := b.pl.in.ReadAt(data, int64(start)); err != nil {
		return false
	}
	if _, _, ok := b.grow(li, dst+(end-start)-(load.Off+filesz), 1); !ok {
		return false
	}
	d := dst - start
	for _, i := range block {
		b.moved[i] = d
	}
	for _, i := range inside {
		b.movedProgs[i] = d
	}
	b.plan.chunks = append(b.plan.chunks, chunk{start, make([]byte, end-start)}, chunk{dst, data})
	b.layout.MovedSections = len(block)
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
