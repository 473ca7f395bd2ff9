package cfi

import (
	"debug/elf"
	"encoding/binary"
	"math/bits"
)

// fdeIndex is where a linked file's .eh_frame_hdr is, whose search table
// lists the FDEs of .eh_frame: CutByIndex reads it instead of walking the
// section's entries.
type fdeIndex struct {
	hdr   []byte // the section .eh_frame_hdr (read by CutByIndex only: it may be a mapping)
	base  int64  // its address minus .eh_frame's: an FDE's offset in .eh_frame is base plus its table entry's second word
	order binary.ByteOrder
}

// findFDEIndex returns where .eh_frame_hdr is in file (the whole file,
// mapped) when f is a 64-bit linked file with such a section, for the
// .eh_frame eh; nothing is read from file.
func findFDEIndex(f *elf.File, file []byte, eh *elf.Section) fdeIndex {
	hdr := f.Section(".eh_frame_hdr")
	if f.Class != elf.ELFCLASS64 || f.Type == elf.ET_REL || hdr == nil || hdr.Type == elf.SHT_NOBITS ||
		hdr.Flags&elf.SHF_COMPRESSED != 0 || hdr.Offset > uint64(len(file)) || hdr.Size > uint64(len(file))-hdr.Offset {
		return fdeIndex{}
	}
	return fdeIndex{hdr: file[hdr.Offset : hdr.Offset+hdr.Size], base: int64(hdr.Addr - eh.Addr), order: f.ByteOrder}
}

// table returns the search table of the header, when it describes the
// section at the address it was found for, in the form GNU ld, gold, lld,
// mold and BOLT write: version 1, the section's address PC-relative
// (sdata4), the count as udata4, the entries (the function's start and
// the FDE's address, 8 bytes) datarel sdata4. Otherwise, nil.
func (ix fdeIndex) table() []byte {
	b := ix.hdr
	if len(b) < 12 || b[0] != 1 || PointerEncoding(b[1]) != PEPCRel|PESData4 || PointerEncoding(b[2]) != PEUData4 || PointerEncoding(b[3]) != PEDataRel|PESData4 {
		return nil
	}
	if ix.base+4+int64(int32(ix.order.Uint32(b[4:]))) != 0 {
		return nil // another .eh_frame's
	}
	count := uint64(ix.order.Uint32(b[8:]))
	if count > uint64(len(b)-12)/8 {
		return nil
	}
	return b[12 : 12+8*count]
}

// CutByIndex is CutWeighted done from the search table of the file's
// .eh_frame_hdr, without reading the section (a Frames of OpenMapped, the
// .eh_frame of a 64-bit linked file): part k starts at the first FDE the
// table lists at or past where CutWeighted's would start, and fdes[k] is
// how many FDEs the table lists in it (at most one per 8 bytes of the
// part). The table is the linker's word, not checked against the section
// here: the cuts are CutWeighted's kind (each at an entry's start, fdes[k]
// a bound) when each part's Scanner, but the last one's, stops at the
// next cut (Scanner.Offset) having read at most fdes[k] FDEs. ok is
// false, and nothing is cut, without such a table.
func (fr *Frames) CutByIndex(weights []int) (cuts, fdes []int, ok bool) {
	ix := fr.index
	table := ix.table()
	if table == nil {
		return nil, nil, false
	}
	bounds := fr.bounds(weights)
	n, size := len(bounds), int64(len(fr.Data))
	first := make([]int64, n) // the first FDE listed in each part, or size
	counts := make([]int, n)
	for k := range first {
		first[k] = size
	}
	big := ix.order == binary.BigEndian // (the interface's method would not be inlined)
	// The part of the FDE before, from lo to hi, its count and first
	// FDE so far (in registers: the table is in the order of the
	// functions, the section mostly too, and the part seldom changes).
	k, lo, hi, count, least := 0, int64(0), int64(0), 0, size
	for e := 0; e+8 <= len(table); e += 8 {
		w := binary.LittleEndian.Uint32(table[e+4:])
		if big {
			w = bits.ReverseBytes32(w)
		}
		off := ix.base + int64(int32(w))
		if off < 0 || off >= size {
			continue
		}
		if off < lo || off >= hi {
			counts[k] += count
			first[k] = min(first[k], least)
			for k = n - 1; int64(bounds[k]) > off; k-- {
			}
			lo, hi, count, least = int64(bounds[k]), size, 0, size
			if k+1 < n {
				hi = int64(bounds[k+1])
			}
		}
		count++
		least = min(least, off)
	}
	counts[k] += count
	first[k] = min(first[k], least)
	cuts, fdes = []int{0}, []int{counts[0]}
	for k := 1; k < n; k++ {
		switch {
		case counts[k] == 0:
		case int(first[k]) == cuts[len(cuts)-1]:
			fdes[len(fdes)-1] += counts[k] // parts of no bytes (a tiny section's)
		default:
			cuts, fdes = append(cuts, int(first[k])), append(fdes, counts[k])
		}
	}
	cuts = append(cuts, int(size))
	for k := range fdes {
		fdes[k] = min(fdes[k], (cuts[k+1]-cuts[k])/8)
	}
	return cuts, fdes, true
}
