package elfpatch

import "sort"

// The layout of a patched relocatable object is a pure function of the
// object's sections whose fixed point is every output: laying out an output
// again gives its own bytes, so a second run over a patched object writes
// nothing.
//
// Sections with bytes are written one after the other in the order of their
// input offsets (new sections last), each at the next offset its alignment
// allows: their output offsets strictly increase in that order, so an
// output's order is its own. A section without bytes in the file
// (SHT_NOBITS, SHT_NULL, or empty) takes no room and moves no other
// section: its sh_offset is where the last section with bytes that ended at
// or before its input offset now ends, aligned as the section asks (as GNU
// as places .bss). Applied to an output, that rule finds the same section
// or a later one ending in the same alignment window, hence the same
// offset. (Placing such a section at an aligned offset while the following
// sections start lower made .bss move on every run: its aligned offset put
// it after the next section the run after.)

// maxFileAlign caps the alignment honoured for file offsets. File offsets
// need not honour sh_addralign in an object (the linker reads the bytes);
// aligning to more than a page would only waste space.
const maxFileAlign = 4096

// layout writes the object: ELF header, program headers (if any), section
// contents in their original file order (new sections last), section
// header table, then the input's trailer (bytes after all it describes).
// It sets every section's sh_offset (and the sh_size of the
// sections with bytes).
func (o *object) layout() []byte {
	h := o.hdr
	out := make([]byte, ehdrSize, len(o.data)+len(o.content[0])+4096)
	if len(o.progs) > 0 {
		h.phoff = ehdrSize
		pb := make([]byte, len(o.progs)*phdrSize)
		for i := range o.progs {
			encodeProg(h.order, pb[i*phdrSize:], &o.progs[i])
		}
		out = append(out, pb...)
	}
	headersEnd := uint64(len(out))
	order := o.fileOrder()
	out, written := o.writeContents(out, order)
	o.placeEmpty(order, newWrittenEnds(o, written, headersEnd))
	pos := alignUp(uint64(len(out)), 8)
	out = append(out, make([]byte, pos-uint64(len(out)))...)
	h.shoff = pos
	out = append(out, encodeSects(&h, o.sects, o.shstrndx)...)
	out = append(out, o.trailer...)
	encodeHeader(out[:ehdrSize], &h)
	return out
}

// writeContents appends to out the contents of the sections with bytes,
// in order, each at the next offset its alignment allows, and returns out
// and those sections.
func (o *object) writeContents(out []byte, order []int) ([]byte, []int) {
	var written []int
	for _, i := range order {
		c := o.bytes(i)
		if !o.takesRoom(i, c) {
			continue
		}
		s := &o.sects[i]
		pos := alignUp(uint64(len(out)), fileAlign(s))
		out = append(out, make([]byte, pos-uint64(len(out)))...)
		s.Off, s.Size = pos, uint64(len(c))
		out = append(out, c...)
		written = append(written, i)
	}
	return out, written
}

// placeEmpty sets the offset of every section without bytes: where the
// last written section that ended at or before it in the input now ends,
// aligned as it asks. (The written sections are those of ends: their
// offsets are the output's now, so their bytes are not read again.)
func (o *object) placeEmpty(order []int, ends *writtenEnds) {
	written := make([]bool, len(o.sects))
	for _, i := range ends.written {
		written[i] = true
	}
	for _, i := range order {
		s := &o.sects[i]
		if written[i] {
			continue
		}
		if s.Type != shtNobits && s.Type != shtNull {
			s.Size = 0
		}
		s.Off = alignUp(ends.endBefore(i), fileAlign(s))
	}
}

// fileOrder returns the section indices (0 excepted) in the order of their
// input offsets, ties by index, new sections last.
func (o *object) fileOrder() []int {
	order := make([]int, 0, len(o.sects))
	for i := 1; i < len(o.sects); i++ {
		order = append(order, i)
	}
	key := func(i int) uint64 {
		if i >= len(o.origOff) {
			return ^uint64(0)
		}
		return o.origOff[i]
	}
	// Stable insertion sort by original offset: section counts are small
	// and the order must be deterministic.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && key(order[j]) < key(order[j-1]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	return order
}

// takesRoom reports whether section i, with contents c, has bytes in the
// file.
func (o *object) takesRoom(i int, c []byte) bool {
	t := o.sects[i].Type
	return t != shtNobits && t != shtNull && len(c) > 0
}

// writtenEnds finds where a section without bytes goes among the written
// sections (in file order).
type writtenEnds struct {
	o       *object
	written []int
	// minInEnd[k] is the smallest input end of written[k:]: it grows
	// with k, so the last written section that ended at or before an
	// offset is found by binary search.
	minInEnd   []uint64
	headersEnd uint64
}

func newWrittenEnds(o *object, written []int, headersEnd uint64) *writtenEnds {
	m := make([]uint64, len(written))
	low := ^uint64(0)
	for k := len(written) - 1; k >= 0; k-- {
		low = min(low, o.inputEnd(written[k]))
		m[k] = low
	}
	return &writtenEnds{o: o, written: written, minInEnd: m, headersEnd: headersEnd}
}

// endBefore returns the output offset where the last of the written
// sections that ended at or before section i's input offset ends, or the
// end of the headers when none did. A new section comes after every
// written one.
func (w *writtenEnds) endBefore(i int) uint64 {
	off := ^uint64(0)
	if i < len(w.o.origOff) {
		off = w.o.origOff[i]
	}
	// The first k whose written[k:] all end after off; the section
	// before it is the last that ended at or before off.
	k := sort.Search(len(w.minInEnd), func(k int) bool { return w.minInEnd[k] > off })
	if k == 0 {
		return w.headersEnd
	}
	s := &w.o.sects[w.written[k-1]]
	return s.Off + s.Size
}

// inputEnd is where section i ended in the input (new sections: after
// everything).
func (o *object) inputEnd(i int) uint64 {
	if i >= len(o.origEnd) {
		return ^uint64(0)
	}
	return o.origEnd[i]
}

// fileAlign is the alignment of section s's file offset.
func fileAlign(s *sect) uint64 {
	return min(max(s.Addralign, 1), maxFileAlign)
}

// satAdd returns a+b, or the largest uint64 when the sum overflows.
func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}
