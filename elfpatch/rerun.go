package elfpatch

import (
	"bytes"
	"cmp"
	"io"
	"slices"
)

// A file PatchLinked wrote is patched again as the file it was made from:
// the section, its PT_GNU_SFRAME, the PT_LOAD added for it (or the growth
// of the PT_LOAD it went into), its section header and name are taken out
// first, the section header table (and a section-name table copied to
// the end) and a moved program header table put back, and the sections moved away from after the program header table
// (with their symbols, dynamic entries and program headers, a PT_NOTE
// they joined split again) put back, so that patching with one section
// and then another gives the bytes of the second alone, and a file does
// not grow at every run with other options.
//
// The file taken as the earlier input is checked before it is used:
// patched with the section the file holds, it must give the file byte for
// byte. When the moved sections cannot be put back so, they are left
// where the first run put them (a file that does not grow, though not
// always the bytes of one run when the two runs needed a different number
// of program headers); any other file (GNU ld's .sframe, a file edited
// since, one whose first PT_LOAD holds only movable sections after the
// table) is patched as it is.

// overlay is a file seen as base (its first baseSize bytes, zeros after)
// cut or extended to size bytes, with chunks written over it in order.
type overlay struct {
	base     io.ReaderAt
	baseSize int64
	size     int64
	chunks   []chunk
}

// ReadAt reads the overlay's bytes at off.
func (o *overlay) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= o.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), o.size-off))
	b := p[:n]
	if m := min(int64(n), max(0, o.baseSize-off)); m > 0 {
		if k, err := o.base.ReadAt(b[:m], off); k < int(m) {
			return k, err
		}
		clear(b[m:])
	} else {
		clear(b)
	}
	for _, c := range o.chunks {
		lo, hi := max(int64(c.off), off), min(int64(c.off)+int64(len(c.data)), off+int64(n))
		if lo < hi {
			copy(b[lo-off:hi-off], c.data[lo-int64(c.off):hi-int64(c.off)])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// earlierInput returns the file an earlier PatchLinked made f (in, of
// size bytes) from, as an overlay over in, when f is such an output (see
// above); else nil.
func earlierInput(f *file, in io.ReaderAt) *overlay {
	cands, secOff, secAddr, secSize, ok := undoPatch(f, in)
	if !ok {
		return nil
	}
	sec := make([]byte, secSize)
	if _, err := in.ReadAt(sec, int64(secOff)); err != nil {
		return nil
	}
	for _, ov := range cands {
		g, err := parse(ov, ov.size)
		if err != nil {
			continue
		}
		p, err := planLinked(g, ov, secSize)
		if err != nil || p.layout.Addr != secAddr || p.layout.Offset != secOff || p.end != uint64(f.size) {
			continue
		}
		if err := p.fixSymbols(g, ov); err != nil {
			continue
		}
		p.chunks = append(p.chunks, chunk{secOff, sec})
		if p.gives(ov, in, ov.chunks) {
			return ov
		}
	}
	return nil
}

// gives reports whether the plan p, written over the input in, gives the
// file want (of p.end bytes), where in differs from want only in the
// ranges of diff and past its end.
func (p *linkedPlan) gives(in *overlay, want io.ReaderAt, diff []chunk) bool {
	out := &overlay{base: in, baseSize: int64(min(p.copyEnd, uint64(in.size))), size: int64(p.end), chunks: p.chunks}
	var spans []span
	for _, cs := range [][]chunk{p.chunks, diff} {
		for _, c := range cs {
			spans = append(spans, span{c.off, c.off + uint64(len(c.data))})
		}
	}
	spans = append(spans, span{min(p.copyEnd, uint64(in.size)), p.end})
	const piece = 64 << 10
	a, b := make([]byte, piece), make([]byte, piece)
	for _, s := range spans {
		for at := s.start; at < min(s.end, p.end); at += piece {
			n := min(piece, min(s.end, p.end)-at)
			if k, _ := out.ReadAt(a[:n], int64(at)); k != int(n) {
				return false
			}
			if k, _ := want.ReadAt(b[:n], int64(at)); k != int(n) {
				return false
			}
			if !bytes.Equal(a[:n], b[:n]) {
				return false
			}
		}
	}
	return true
}

// undoPatch builds the file an earlier PatchLinked made f from, when f
// looks like one of its outputs: a last section header of SFrame type, at
// the end of the file, covered exactly by the one PT_GNU_SFRAME, in a
// read-only PT_LOAD that either holds only it (and perhaps the program
// header table before it: a new PT_LOAD) or ends with it (a grown one).
// It returns the candidates, best first (with the sections moved from
// after the program header table put back, then without), and where the
// section is.
func undoPatch(f *file, in io.ReaderAt) (cands []*overlay, off, addr, size uint64, ok bool) {
	n := len(f.sects)
	if n < 2 || f.hdr.shoff == 0 || f.hdr.shoff+uint64(n)*shdrSize != uint64(f.size) || f.shstrndx == 0 || f.shstrndx == n-1 {
		return nil, 0, 0, 0, false
	}
	s := f.sects[n-1]
	if s.Type != shtGNUSFrame || s.Flags != shfAlloc || s.Size == 0 {
		return nil, 0, 0, 0, false
	}
	pt, li, loads := -1, -1, 0
	for i, p := range f.progs {
		switch {
		case p.Type == ptGNUSFrame:
			if pt >= 0 || p.Off != s.Off || p.Vaddr != s.Addr || p.Filesz != s.Size || p.Memsz != s.Size {
				return nil, 0, 0, 0, false
			}
			pt = i
		case p.Type == ptLoad:
			loads++
			if s.Off >= p.Off && s.Off+s.Size <= p.Off+p.Filesz && s.Addr-s.Off == p.Vaddr-p.Off {
				li = i
			}
		}
	}
	if pt < 0 || li < 0 || loads < 2 {
		return nil, 0, 0, 0, false
	}
	l := f.progs[li]
	if l.Flags != pfR || l.Filesz != l.Memsz || s.Off+s.Size != l.Off+l.Filesz {
		return nil, 0, 0, 0, false
	}
	phSize := uint64(len(f.progs)) * phdrSize
	last := true
	for _, p := range f.progs {
		if p.Type == ptLoad && p.Vaddr > l.Vaddr {
			last = false
		}
	}
	newLoad := last && (s.Off == l.Off || f.hdr.phoff == l.Off && s.Off == alignUp(l.Off+phSize, 8))
	tableMoved := newLoad && f.hdr.phoff == l.Off

	h := f.hdr
	sects := slices.Clone(f.sects[:n-1])
	shstr := &sects[f.shstrndx]
	grown := uint64(s.Name)+uint64(len(nameSFrame))+1 == shstr.Size && bytes.HasSuffix(f.shstrtab, []byte(nameSFrame+"\x00"))
	if grown {
		shstr.Size -= uint64(len(nameSFrame)) + 1
	}
	var progs []prog
	for i, p := range f.progs {
		switch {
		case i == pt, i == li && newLoad:
			continue
		case i == li:
			// The PT_LOAD ends where the last of its sections ends.
			end := l.Off
			if h.phoff >= l.Off && h.phoff < s.Off {
				end = max(end, h.phoff+phSize)
			}
			for _, t := range sects {
				if t.hasContent() && t.Off >= l.Off && t.Off < s.Off {
					end = max(end, t.Off+t.Size)
				}
			}
			p.Filesz, p.Memsz = end-l.Off, end-l.Off
		}
		progs = append(progs, p)
	}
	var chunks []chunk
	if tableMoved {
		// The table was moved to the new PT_LOAD; where it was, after the
		// ELF header, the copy is left as it was.
		h.phoff = ehdrSize
		first := -1
		for i, p := range progs {
			if p.Type == ptLoad && (first < 0 || p.Vaddr < progs[first].Vaddr) {
				first = i
			}
		}
		for i := range progs {
			if progs[i].Type == ptPhdr {
				fl := progs[first]
				progs[i].Off, progs[i].Vaddr, progs[i].Paddr = ehdrSize, fl.Vaddr-fl.Off+ehdrSize, fl.Paddr-fl.Off+ehdrSize
			}
		}
	} else {
		// What the table grew into is free again.
		chunks = append(chunks, chunk{h.phoff + uint64(len(progs))*phdrSize, make([]byte, phSize-uint64(len(progs))*phdrSize)})
	}
	for i := range progs {
		if progs[i].Type == ptPhdr {
			is := uint64(len(progs)) * phdrSize
			progs[i].Filesz, progs[i].Memsz = progs[i].Filesz-phSize+is, progs[i].Memsz-phSize+is
		}
	}
	if !newLoad {
		chunks = append(chunks, chunk{s.Off, make([]byte, s.Size)})
	}
	st := undoState{h: h, progs: progs, sects: sects, chunks: chunks, tableMoved: tableMoved}
	moves, unknown := undoMoves(f, in, st)
	if unknown {
		return nil, 0, 0, 0, false
	}
	for _, m := range append(moves, st) {
		if grown {
			if b, ok := m.nameTableBack(f, in); ok {
				cands = append(cands, b.overlay(f, in))
			}
		}
		cands = append(cands, m.overlay(f, in))
	}
	return cands, s.Off, s.Addr, s.Size, true
}

// nameTableWindow bounds how many bytes before the end of an earlier
// input nameTableBack reads to find the section-name and section header
// tables that input had.
const nameTableWindow = 64 << 10

// nameTableBack returns st with the section-name table put back where it
// was in an input whose section header table was not at its end (bytes
// after it, or the name table not the last content): PatchLinked then
// wrote the grown table at the end of the input, and the section header
// table after it, leaving the input's two tables where they were. So
// when the name table is the last content, the input ended where it
// starts, and its two tables are found, unchanged, between the end of its
// other content and its own end (in the last nameTableWindow bytes).
// Whether it was moved or grown in place, the output does not say: the
// caller tries both. A name table grown in place follows the other
// content with no room for the tables between: nothing is read then.
func (st undoState) nameTableBack(f *file, in io.ReaderAt) (undoState, bool) {
	name := st.sects[f.shstrndx]
	end := name.Off // where the earlier input would have ended
	tail := st.h.phoff + uint64(len(st.progs))*phdrSize
	for i, t := range st.sects {
		if i != f.shstrndx && t.hasContent() {
			tail = max(tail, t.Off+t.Size)
		}
	}
	for _, p := range st.progs {
		if p.Filesz > 0 {
			tail = max(tail, p.Off+p.Filesz)
		}
	}
	if name.Size == 0 || tail > end || end-tail < name.Size+uint64(len(st.sects))*shdrSize {
		return st, false
	}
	from := max(tail, end-min(end, nameTableWindow))
	win := make([]byte, end-from)
	if _, err := in.ReadAt(win, int64(from)); err != nil {
		return st, false
	}
	content := f.shstrtab[:name.Size]
	for at, tries := 0, 0; tries < 4; tries++ {
		i := bytes.Index(win[at:], content)
		if i < 0 {
			break
		}
		at += i
		b := undoState{h: st.h, progs: st.progs, sects: slices.Clone(st.sects), chunks: st.chunks, tableMoved: st.tableMoved, size: end}
		b.sects[f.shstrndx].Off = from + uint64(at)
		table := encodeSects(&b.h, slices.Clone(b.sects), f.shstrndx)
		if j := bytes.Index(win, table); j >= 0 {
			b.h.shoff = from + uint64(j)
			return b, true
		}
		at++
	}
	return st, false
}

// undoState is the file an earlier patch was made from, as undoPatch
// rebuilds it: its headers, and the bytes that differ from the output's.
type undoState struct {
	h          header
	progs      []prog
	sects      []sect
	chunks     []chunk
	tableMoved bool
	// size, when not 0, is the file's size, its section header table
	// being where h.shoff says; else the table follows the last content.
	size uint64
}

// overlay encodes the state's headers (the section header table after
// the last content, aligned to 8, as ld puts it) over in.
func (st undoState) overlay(f *file, in io.ReaderAt) *overlay {
	h, progs, sects := st.h, st.progs, slices.Clone(st.sects)
	chunks := slices.Clone(st.chunks)
	end := uint64(ehdrSize)
	if !st.tableMoved {
		end = max(end, h.phoff+uint64(len(progs))*phdrSize)
	}
	for _, t := range sects {
		if t.hasContent() {
			end = max(end, t.Off+t.Size)
		}
	}
	for _, p := range progs {
		if p.Filesz > 0 {
			end = max(end, p.Off+p.Filesz)
		}
	}
	size := st.size
	if size == 0 {
		h.shoff = alignUp(end, 8)
		chunks = append(chunks, chunk{end, make([]byte, h.shoff-end)})
		size = h.shoff + uint64(len(sects))*shdrSize
	}
	h.phnum = uint16(len(progs))
	pt := make([]byte, len(progs)*phdrSize)
	for i := range progs {
		encodeProg(h.order, pt[i*phdrSize:], &progs[i])
	}
	chunks = append(chunks, chunk{h.phoff, pt})
	chunks = append(chunks, chunk{h.shoff, encodeSects(&h, sects, f.shstrndx)})
	eh := make([]byte, ehdrSize)
	encodeHeader(eh, &h)
	chunks = append(chunks, chunk{0, eh})
	return &overlay{base: in, baseSize: f.size, size: int64(size), chunks: chunks}
}

// undoMoves returns st with the sections an earlier patch moved from
// after the program header table to the end of the first PT_LOAD
// (moveAfterPhdrs) put back: the movable sections that end the first
// PT_LOAD after others that are not, moved back to the first place after
// the table that keeps their alignment, with their symbols, the dynamic
// entries naming them and the program headers over them; a PT_NOTE that
// runs on into them is split, its other part's entry put back at each
// place it may have had (one state for each). None when no such sections;
// unknown when every section there is movable: whether the first run moved
// them, and from where, the output does not tell.
func undoMoves(f *file, in io.ReaderAt, st undoState) (states []undoState, unknown bool) {
	if st.tableMoved {
		return nil, false
	}
	fl := -1
	for i, p := range st.progs {
		if p.Type == ptLoad && (fl < 0 || p.Vaddr < st.progs[fl].Vaddr) {
			fl = i
		}
	}
	load := st.progs[fl]
	tableEnd := st.h.phoff + uint64(len(st.progs))*phdrSize
	if st.h.phoff < load.Off || tableEnd > load.Off+load.Filesz {
		return nil, false
	}
	// The sections with content in the first PT_LOAD's file range after
	// the table, by offset; as for moveAfterPhdrs, one whose address is
	// not the load's for its offset is there too, and is not movable.
	var in1 []int
	for i, t := range st.sects {
		if t.hasContent() && t.Off >= tableEnd && t.Off < load.Off+load.Filesz {
			in1 = append(in1, i)
		}
	}
	slices.SortFunc(in1, func(a, b int) int { return cmp.Compare(st.sects[a].Off, st.sects[b].Off) })
	dyn := f.dynamicRefs(in)
	k := len(in1)
	for k > 0 {
		t := &st.sects[in1[k-1]]
		if t.Addr-t.Off != load.Vaddr-load.Off || !f.movable(t, dyn) {
			break
		}
		k--
	}
	if k == 0 && len(in1) > 0 {
		return nil, true
	}
	if k == len(in1) {
		return nil, false
	}
	moved := in1[k:]
	dst, dstEnd, align := st.sects[moved[0]].Off, uint64(0), uint64(1)
	for _, i := range moved {
		dstEnd = max(dstEnd, st.sects[i].Off+st.sects[i].Size)
		align = max(align, st.sects[i].Addralign)
	}
	firstKept := st.sects[in1[0]].Off
	// A PT_NOTE that runs on from before the moved sections into them
	// took in a moved note: split it.
	split := -1
	for i, p := range st.progs {
		if p.Type == 4 && p.Off < dst && p.Off+p.Filesz > dst && p.Filesz == p.Memsz {
			split = i
		}
	}
	var out []undoState
	places := []int{-1}
	if split >= 0 {
		places = places[:0]
		for at := 0; at <= len(st.progs); at++ {
			places = append(places, at)
		}
	}
	for _, at := range places {
		n := len(st.progs)
		if at >= 0 {
			n++
		}
		end := st.h.phoff + uint64(n)*phdrSize
		s0 := alignUp(end-dst%align, align) + dst%align
		if s0 < end {
			s0 += align
		}
		if s0 >= dst || s0+(dstEnd-dst) > firstKept {
			continue
		}
		d := dst - s0
		m := undoState{h: st.h, progs: slices.Clone(st.progs), sects: slices.Clone(st.sects), chunks: slices.Clone(st.chunks), tableMoved: false}
		if at >= 0 {
			q := &m.progs[split]
			note := *q
			note.Off, note.Vaddr, note.Paddr = dst, q.Vaddr+(dst-q.Off), q.Paddr+(dst-q.Off)
			note.Filesz = q.Off + q.Filesz - dst
			note.Memsz = note.Filesz
			q.Filesz, q.Memsz = dst-q.Off, dst-q.Off
			m.progs = insertProg(m.progs, at, note)
		}
		kept := load.Off + (tableEnd - load.Off)
		for _, i := range in1[:k] {
			kept = max(kept, st.sects[i].Off+st.sects[i].Size)
		}
		for i := range m.progs {
			p := &m.progs[i]
			switch {
			case p.Type == ptLoad && p.Vaddr == load.Vaddr:
				p.Filesz, p.Memsz = kept-load.Off, kept-load.Off
			case p.Type == ptPhdr:
				was, is := uint64(len(st.progs))*phdrSize, uint64(len(m.progs))*phdrSize
				p.Filesz, p.Memsz = p.Filesz-was+is, p.Memsz-was+is
			case p.Type != ptLoad && p.Filesz > 0 && p.Off >= dst && p.Off+p.Filesz <= dstEnd:
				p.Off, p.Vaddr, p.Paddr = p.Off-d, p.Vaddr-d, p.Paddr-d
			}
		}
		data := make([]byte, dstEnd-dst)
		if _, err := in.ReadAt(data, int64(dst)); err != nil {
			return nil, false
		}
		m.chunks = append(m.chunks, chunk{dst, make([]byte, dstEnd-dst)}, chunk{s0, data})
		o := f.hdr.order
		back := map[int]uint64{}
		for _, i := range moved {
			t := &m.sects[i]
			for _, off := range dyn[t.Addr] {
				v := make([]byte, 8)
				o.PutUint64(v, t.Addr-d)
				m.chunks = append(m.chunks, chunk{off, v})
			}
			t.Off, t.Addr = t.Off-d, t.Addr-d
			back[i] = -d
		}
		sym := &linkedPlan{moved: back}
		if err := sym.fixSymbols(f, in); err != nil {
			return nil, false
		}
		m.chunks = append(m.chunks, sym.chunks...)
		out = append(out, m)
	}
	return out, false
}

// planInput parses in and plans the patch of its earlier input when in is
// an output of PatchLinked (earlierInput), else of in. The plan's chunks
// then hold what changes from in to the earlier input too, written first.
func planInput(in io.ReaderAt, inSize int64, size uint64) (*linkedPlan, *file, io.ReaderAt, error) {
	f, err := parse(in, inSize)
	if err != nil {
		return nil, nil, nil, err
	}
	ov := earlierInput(f, in)
	if ov == nil {
		p, err := planLinked(f, in, size)
		return p, f, in, err
	}
	g, err := parse(ov, ov.size)
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := planLinked(g, ov, size)
	if err != nil {
		return nil, nil, nil, err
	}
	p.layout.Replaced = true
	// The output's first copyEnd bytes are the earlier input's: in's,
	// with what differs written over them.
	var under []chunk
	for _, c := range ov.chunks {
		if c.off < p.copyEnd {
			under = append(under, chunk{c.off, c.data[:min(uint64(len(c.data)), p.copyEnd-c.off)]})
		}
	}
	p.chunks = append(under, p.chunks...)
	p.copyEnd = min(p.copyEnd, uint64(inSize))
	return p, g, ov, nil
}

// flatten makes the plan's chunks, of which a later one is written over
// an earlier, chunks that do not overlap, sorted by offset, each holding
// the bytes the output has there.
func (p *linkedPlan) flatten() {
	if len(p.chunks) < 2 {
		return
	}
	var bounds []uint64
	for _, c := range p.chunks {
		bounds = append(bounds, c.off, c.off+uint64(len(c.data)))
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var out []chunk
	for i := 0; i+1 < len(bounds); i++ {
		from, to := bounds[i], bounds[i+1]
		for j := len(p.chunks) - 1; j >= 0; j-- {
			c := p.chunks[j]
			if c.off <= from && to <= c.off+uint64(len(c.data)) {
				b := c.data[from-c.off : to-c.off]
				if n := len(out); n > 0 && out[n-1].off+uint64(len(out[n-1].data)) == from {
					out[n-1].data = append(slices.Clip(out[n-1].data), b...)
				} else {
					out = append(out, chunk{from, b})
				}
				break
			}
		}
	}
	p.chunks = out
}
