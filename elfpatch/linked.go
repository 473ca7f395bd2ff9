package elfpatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Layout says where PatchLinked put the SFrame section and what it changed.
type Layout struct {
	// Addr and Offset are the section's address and file offset; Size its
	// length in bytes.
	Addr, Offset, Size uint64
	// InPlace is set when an existing .sframe was overwritten where it was.
	InPlace bool
	// GrownLoad is the index (in the input's program header table) of the
	// first PT_LOAD that was extended into the free space after it, to
	// hold the section or moved notes; -1 if none.
	GrownLoad int
	// NewLoad is set when a new read-only PT_LOAD was added at the end of
	// the file.
	NewLoad bool
	// PhdrsMoved is set when the program header table was moved (to make
	// room for the added entries); PhdrsOffset is its new file offset.
	PhdrsMoved  bool
	PhdrsOffset uint64
	// MovedSections is the number of note/.interp sections moved from
	// after the program header table to the end of the first PT_LOAD so
	// that the table could grow where it is.
	MovedSections int
	// MergedNotes is the number of PT_NOTE headers dropped because their
	// moved notes joined another PT_NOTE.
	MergedNotes int
	// PhdrExecCleared is set when PT_PHDR had PF_X (old linkers wrote
	// PF_R|PF_X), which the patch cleared: the Linux kernel registers
	// the SFrame section for every PF_X program header.
	PhdrExecCleared bool
	// Replaced is set when the input was an output of PatchLinked: what
	// that patch added (the section, its PT_GNU_SFRAME, section header
	// and name, the PT_LOAD made or grown for it) was taken out first,
	// and the rest of Layout says how the file it was made from is
	// patched.
	Replaced bool
}

// maxPadding bounds the zero padding PatchLinked inserts before a new
// PT_LOAD to keep the program header table at the address old kernels
// compute; beyond it the padding is dropped (see docs/elfpatch.md).
const maxPadding = 64 << 20

// PatchLinked writes to out a copy of the linked ELF file in (ET_EXEC or
// ET_DYN: executable, PIE or shared library) in which an SFrame section of
// size bytes is loaded: inside a read-only PT_LOAD, covered exactly by a
// PT_GNU_SFRAME program header (PF_R, align 8), with an SHT_GNU_SFRAME
// section header named .sframe appended to the section header table.
//
// SFrame function start addresses are PC-relative, so the contents depend
// on where the section lands: encode is called once with the section's
// final virtual address and must return exactly size bytes.
//
// An existing .sframe (any version, or empty) is overwritten in place when
// the new one fits in its slot (its section size, or the PT_GNU_SFRAME size
// ld laid out), else moved; its section header index is kept and there is
// never more than one PT_GNU_SFRAME. An output of PatchLinked is patched as
// the file it was made from (Layout.Replaced): again with the same section
// it gives identical bytes, with another the bytes that file patched with
// it gives. docs/elfpatch.md describes where
// a new section and the program header table go, and why.
//
// Unchanged byte ranges are copied file to file (copy_file_range where the
// kernel has it); only headers and the new section pass through memory.
// in and out must be different files. out is truncated first; on error its
// contents are unspecified, so write through a temporary file
// (replace.TempFiles.ReplaceFile).
func PatchLinked(in, out *os.File, size int, encode func(addr uint64) ([]byte, error)) (Layout, error) {
	return patchLinked(in, out, size, whole(encode), nil)
}

// patchLinkedCopy is PatchLinked for an out that already holds an exact
// copy of in (its first bytes: out may not be shorter than in), made for
// example while the section was being generated, so that the copy and the
// work overlap. Only the bytes that differ are written; out is cut or
// extended to the new size.
func patchLinkedCopy(in, out *os.File, size int, encode func(addr uint64) ([]byte, error)) (Layout, error) {
	return patchLinked(in, out, size, whole(encode), copyDone)
}

// copyDone is the wait of a copy already made.
func copyDone() error { return nil }

// PatchLinkedCopyParts is patchLinkedCopy with the section given in pieces
// written one after the other (emit.Section.EncodeParts): the FRE data of
// a packed section is written from where it is, not first copied into one
// buffer with the header and index. The copy may still be running: wait
// is called once the section is encoded, before out is looked at or
// written, and must return when the copy is complete (its error, if any,
// ends the patch; nil: the copy is made). Planning and encoding thus
// overlap the copy too.
func PatchLinkedCopyParts(in, out *os.File, size int, encode func(addr uint64) ([][]byte, error), wait func() error) (Layout, error) {
	if wait == nil {
		wait = copyDone
	}
	return patchLinked(in, out, size, encode, wait)
}

// whole makes an encode function of the section in one piece one of the
// section in pieces.
func whole(encode func(addr uint64) ([]byte, error)) func(addr uint64) ([][]byte, error) {
	return func(addr uint64) ([][]byte, error) {
		b, err := encode(addr)
		return [][]byte{b}, err
	}
}

// patchLinked writes out as in with the section encode gives. With
// copied nil, out is written whole; otherwise copied is called before out
// is written, which then holds a copy of in: only what differs is written.
func patchLinked(in, out *os.File, size int, encode func(addr uint64) ([][]byte, error), copied func() error) (Layout, error) {
	st, err := in.Stat()
	if err != nil {
		return Layout{}, err
	}
	p, err := planPatch(in, st.Size(), size, encode)
	if err != nil {
		return Layout{}, err
	}
	write := p.write
	if copied != nil {
		if err := copied(); err != nil {
			return Layout{}, err
		}
		write = p.writeOverCopy
	}
	if err := write(in, out); err != nil {
		return Layout{}, err
	}
	return p.layout, nil
}

// planPatch lays out the output of patchLinked for the input in (inSize
// bytes) and encodes the section into its chunks, without writing
// anything.
func planPatch(in io.ReaderAt, inSize int64, size int, encode func(addr uint64) ([][]byte, error)) (*linkedPlan, error) {
	p, f, src, err := planInput(in, inSize, uint64(size))
	if err != nil {
		return nil, err
	}
	if err := p.fixSymbols(f, src); err != nil {
		return nil, err
	}
	parts, err := encode(p.layout.Addr)
	if err != nil {
		return nil, fmt.Errorf("encoding SFrame section for address %#x: %w", p.layout.Addr, err)
	}
	n := 0
	for _, b := range parts {
		n += len(b)
	}
	if n != size {
		return nil, fmt.Errorf("encoded SFrame section is %d bytes, announced %d", n, size)
	}
	off := p.layout.Offset
	for _, b := range parts {
		p.chunks = append(p.chunks, chunk{off, b})
		off += uint64(len(b))
	}
	if p.layout.Replaced {
		p.flatten()
	}
	return p, nil
}

// chunk is bytes to write at a file offset of the output.
type chunk struct {
	off  uint64
	data []byte
}

// linkedPlan is the output file: a prefix of the input and chunks over it.
type linkedPlan struct {
	layout  Layout
	copyEnd uint64 // input bytes [0, copyEnd) are copied
	end     uint64 // output size
	chunks  []chunk
	// moved are sections moved by the layout (index -> address delta),
	// whose symbols must follow.
	moved map[int]uint64
}

// span is a used byte range [start, end) of the input file.
type span struct{ start, end uint64 }

// planner holds the state of one layout decision.
type planner struct {
	f        *file
	in       io.ReaderAt
	size     uint64 // SFrame section size
	loads    []int  // indices of PT_LOAD headers, in address order
	pageSize uint64
	used     []span         // file ranges in use (headers, sections, segments)
	sfIdx    int            // existing .sframe section, or -1
	ptIdx    int            // existing PT_GNU_SFRAME, or -1
	rooms    map[int]uint64 // PT_LOAD index -> room (roomAfter)
}

func planLinked(f *file, in io.ReaderAt, size uint64) (*linkedPlan, error) {
	if f.hdr.typ != etExec && f.hdr.typ != etDyn {
		return nil, fmt.Errorf("ELF type %d is not ET_EXEC or ET_DYN (a linked executable or shared library)", f.hdr.typ)
	}
	pl := &planner{f: f, in: in, size: size, sfIdx: -1, ptIdx: -1, pageSize: 4096}
	if err := pl.scan(); err != nil {
		return nil, err
	}
	if p, ok := pl.tryInPlace(); ok {
		return p, nil
	}
	if p, ok := pl.tryGap(); ok {
		return p, nil
	}
	return pl.tryNewLoad(), nil
}

// scan finds the loads, the page size, the used file ranges and any
// existing SFrame section and program header.
func (pl *planner) scan() error {
	f := pl.f
	for i := range f.progs {
		p := &f.progs[i]
		switch p.Type {
		case ptLoad:
			if n := len(pl.loads); n > 0 {
				q := &f.progs[pl.loads[n-1]]
				if p.Vaddr < q.Vaddr {
					return fmt.Errorf("program headers %d and %d: PT_LOAD segments are not sorted by address", pl.loads[n-1], i)
				}
				if p.Vaddr < q.Vaddr+q.Memsz {
					return fmt.Errorf("program headers %d and %d: PT_LOAD segments overlap", pl.loads[n-1], i)
				}
			}
			pl.loads = append(pl.loads, i)
			if p.Align > pl.pageSize {
				pl.pageSize = p.Align
			}
		case ptGNUSFrame:
			if pl.ptIdx >= 0 {
				return fmt.Errorf("program headers %d and %d: two PT_GNU_SFRAME", pl.ptIdx, i)
			}
			pl.ptIdx = i
		}
		if p.Filesz > 0 {
			pl.used = append(pl.used, span{p.Off, p.Off + p.Filesz})
		}
	}
	if len(pl.loads) == 0 {
		return errors.New("no PT_LOAD program header")
	}
	last := &f.progs[pl.loads[len(pl.loads)-1]]
	if last.Vaddr+last.Memsz > 1<<62 {
		return fmt.Errorf("program header %d (LOAD): ends at %#x, leaving no address space above it", pl.loads[len(pl.loads)-1], last.Vaddr+last.Memsz)
	}
	pl.used = append(pl.used, span{0, ehdrSize}, span{f.hdr.phoff, f.hdr.phoff + uint64(len(f.progs))*phdrSize})
	if f.hdr.shoff != 0 {
		pl.used = append(pl.used, span{f.hdr.shoff, f.hdr.shoff + uint64(len(f.sects))*shdrSize})
	}
	for i := range f.sects {
		s := &f.sects[i]
		if s.hasContent() {
			pl.used = append(pl.used, span{s.Off, s.Off + s.Size})
		}
		if s.Type == shtGNUSFrame || (s.Type != shtNull && f.name(s) == nameSFrame) {
			if pl.sfIdx >= 0 {
				return fmt.Errorf("sections %d and %d: two SFrame sections", pl.sfIdx, i)
			}
			pl.sfIdx = i
		}
	}
	return nil
}

// loadOf returns the index of the PT_LOAD whose file image holds
// [off, off+n) at address addr, or -1.
func (pl *planner) loadOf(off, addr, n uint64) int {
	for _, i := range pl.loads {
		p := &pl.f.progs[i]
		if off >= p.Off && off+n <= p.Off+p.Filesz && addr-off == p.Vaddr-p.Off {
			return i
		}
	}
	return -1
}

// roomAfter is room(li), found once.
func (pl *planner) roomAfter(li int) uint64 {
	if r, ok := pl.rooms[li]; ok {
		return r
	}
	if pl.rooms == nil {
		pl.rooms = map[int]uint64{}
	}
	r := pl.room(li)
	pl.rooms[li] = r
	return r
}

// room returns how many bytes may be appended to PT_LOAD li's image: free
// in the file up to the next used byte, and in memory up to the page of the
// next PT_LOAD. Loads with a zero-fill part cannot grow.
func (pl *planner) room(li int) uint64 {
	p := &pl.f.progs[li]
	if p.Filesz != p.Memsz {
		return 0
	}
	end := p.Off + p.Filesz
	limit := uint64(pl.f.size)
	for _, u := range pl.used {
		if u.end <= end || u.start >= limit {
			continue
		}
		if u.start <= end {
			return 0
		}
		limit = u.start
	}
	// Only the zeros there are free: a patch that wrote over other bytes
	// (left by some tool outside every section and segment) would give
	// the output of another input too, which a re-run could not tell
	// apart from this one.
	room := pl.zeros(end, limit)
	vend := p.Vaddr + p.Memsz
	for k, i := range pl.loads {
		if i != li || k+1 == len(pl.loads) {
			continue
		}
		next := pl.f.progs[pl.loads[k+1]].Vaddr &^ (pl.pageSize - 1)
		if next <= vend {
			return 0
		}
		if next-vend < room {
			room = next - vend
		}
	}
	return room
}

// zeros returns how many of the input's bytes from start on, up to end,
// are zeros (bytes past the end of the file count as zeros).
func (pl *planner) zeros(start, end uint64) uint64 {
	// Read 4 KiB first (the zeros past a segment are most often its
	// padding to a page), then up to 64 KiB at a time.
	const first, piece = 4 << 10, 64 << 10
	buf := make([]byte, min(first, end-min(start, end)))
	for at := start; at < end && at < uint64(pl.f.size); {
		n := min(uint64(len(buf)), end-at, uint64(pl.f.size)-at)
		if k, _ := pl.in.ReadAt(buf[:n], int64(at)); k != int(n) {
			return at - start
		}
		if i := nonZero(buf[:n]); i < int(n) {
			return at + uint64(i) - start
		}
		at += n
		if len(buf) < piece && at < end {
			buf = make([]byte, min(piece, end-at))
		}
	}
	return end - min(start, end)
}

// nonZero returns the index of the first byte of b that is not zero, or
// len(b), comparing 8 bytes at a time.
func nonZero(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:]) != 0 {
			break
		}
	}
	for ; i < len(b) && b[i] == 0; i++ {
	}
	return i
}

// isFree reports whether [start, end) overlaps no used range other than the
// PT_LOAD and PT_PHDR segments, and holds zeros in the input (see room).
func (pl *planner) isFree(start, end uint64) bool {
	if start < end && pl.zeros(start, end) != end-start {
		return false
	}
	for _, s := range pl.f.sects {
		if s.hasContent() && s.Off < end && s.Off+s.Size > start {
			return false
		}
	}
	for _, p := range pl.f.progs {
		if p.Type != ptLoad && p.Type != ptPhdr && p.Filesz > 0 && p.Off < end && p.Off+p.Filesz > start {
			return false
		}
	}
	h := &pl.f.hdr
	return h.shoff == 0 || h.shoff >= end || h.shoff+uint64(len(pl.f.sects))*shdrSize <= start
}

// existing returns the slot of an existing loaded SFrame section: offset,
// address and the bytes available, and the PT_LOAD holding it.
func (pl *planner) existing() (off, addr, slot uint64, load int, ok bool) {
	f := pl.f
	var pt *prog
	if pl.ptIdx >= 0 {
		pt = &f.progs[pl.ptIdx]
	}
	switch {
	case pl.sfIdx >= 0:
		s := &f.sects[pl.sfIdx]
		if s.Flags&shfAlloc == 0 || s.Type == shtNobits {
			return 0, 0, 0, -1, false
		}
		off, addr, slot = s.Off, s.Addr, s.Size
		if pt != nil && pt.Off == off && pt.Vaddr == addr && pt.Filesz > slot {
			slot = pt.Filesz
		}
	case pt != nil:
		off, addr, slot = pt.Off, pt.Vaddr, pt.Filesz
	default:
		return 0, 0, 0, -1, false
	}
	load = pl.loadOf(off, addr, slot)
	if load < 0 {
		// ld's laid-out slot may run past the end of the load image.
		slot = min(slot, pl.sectSize())
		load = pl.loadOf(off, addr, slot)
	}
	if load < 0 || f.progs[load].Flags&pfW != 0 {
		return 0, 0, 0, -1, false
	}
	return off, addr, slot, load, true
}

func (pl *planner) sectSize() uint64 {
	if pl.sfIdx >= 0 {
		return pl.f.sects[pl.sfIdx].Size
	}
	return 0
}

// tryInPlace overwrites an existing SFrame section when the new one fits.
func (pl *planner) tryInPlace() (*linkedPlan, bool) {
	off, addr, slot, _, ok := pl.existing()
	if !ok || pl.size > slot {
		return nil, false
	}
	b := newBuilder(pl)
	b.setSFrame(off, addr)
	if slot > pl.size {
		b.plan.chunks = append(b.plan.chunks, chunk{off + pl.size, make([]byte, slot-pl.size)})
	}
	b.layout.InPlace = true
	if pl.ptIdx < 0 {
		// A PT_GNU_SFRAME must be added: the table grows by one entry,
		// or moves to a new PT_LOAD (two entries).
		if !b.placePhdrs(1) {
			b.placePhdrs(2)
			b.newLoad()
		}
	}
	return b.finish(), true
}

// tryGap places the section in the free space after a read-only PT_LOAD,
// when the program header table can take a PT_GNU_SFRAME without a new
// PT_LOAD (it exists, or the table can grow in place).
func (pl *planner) tryGap() (*linkedPlan, bool) {
	// Moving sections to make room for a program header (placePhdrs)
	// only takes room at a load's end: where no read-only PT_LOAD has
	// room for the section as the file is, none has after, and the
	// moves (which read the sections moved) need not be planned.
	if _, _, ok := newBuilder(pl).growReadOnly(pl.size); !ok {
		return nil, false
	}
	b := newBuilder(pl)
	if pl.ptIdx < 0 && !b.placePhdrs(1) {
		return nil, false
	}
	off, addr, ok := b.growReadOnly(pl.size)
	if !ok {
		return nil, false
	}
	b.setSFrame(off, addr)
	return b.finish(), true
}

// tryNewLoad places the section in a new read-only PT_LOAD at the end of
// the file, with the program header table at its start unless the table
// can grow in place.
func (pl *planner) tryNewLoad() *linkedPlan {
	b := newBuilder(pl)
	extra := 1
	if pl.ptIdx < 0 {
		extra++
	}
	b.placePhdrs(extra)
	b.newLoad()
	return b.finish()
}
