package cfi

import (
	"encoding/binary"
	"math/bits"
)

// Scanner reads the FDEs of one part of a CFI section one at a time, as
// Read reads them all: for a caller that lowers each FDE once and keeps
// none (Read holds 88 bytes per FDE at once), and for one that reads the
// parts of a section at once (Frames.Cut), each with its own Scanner. The
// Scanners of one Frames may run on several goroutines at once: they
// share only the section's bytes and its PointerContext, whose Indirect
// must then be safe for concurrent use (Open's is).
type Scanner struct {
	p        *parser
	own      Frames // the errors and CIEs of the part
	off, end int
}

// Scanner returns a Scanner of the entries of fr's section from offset
// from to offset to: 0 and len(fr.Data) for the whole section, or two
// consecutive offsets of Cut. fr itself is not changed: the Scanner keeps
// the errors of the part.
func (fr *Frames) Scanner(from, to int) *Scanner {
	from = max(0, min(from, len(fr.Data)))
	s := &Scanner{own: *fr, off: from, end: max(from, min(to, len(fr.Data)))}
	s.own.FDEs, s.own.CIEs, s.own.Errors = nil, nil, nil
	s.p = newParser(fr, &s.own)
	return s
}

// Next reads entries up to the next FDE of the part and decodes it into f:
// false when the part has no more. Its CIE is shared by the part's FDEs;
// its instructions alias fr.Data. The broken entries on the way are
// collected in Errors.
func (s *Scanner) Next(f *FDE) bool {
	for s.off < s.end {
		if s.usual(f) {
			return true
		}
		h, next, fde := s.p.entry(s.off)
		s.off = next
		if !fde {
			continue
		}
		*f = FDE{}
		if err := s.p.parseFDE(&h, f); err != nil {
			s.p.fail(h.off, err)
			continue
		}
		return true
	}
	return false
}

// usual decodes the entry at s.off into f and moves past it when it is
// an FDE of a linked file's .eh_frame in the usual form, with nothing
// wrong: a 32-bit length, the CIE of the FDE before it (decoded without
// error), PC-relative 4-byte start and size, augmentation data of at most
// 127 bytes. Anything else is left to entry and parseFDE, which decode it
// alike (FuzzRead compares Scanners with Read).
func (s *Scanner) usual(f *FDE) bool {
	p := s.p
	data, off := p.data, s.off
	if !p.eh || p.ptr.rel != nil || p.last == nil || p.last.err != nil || len(data)-off < 16 {
		return false
	}
	// Compared as uint32 first: an int holds them on 64-bit systems only.
	length32, id32 := p.u32(data[off:]), p.u32(data[off+4:])
	if length32 < 12 || length32 >= 0xfffffff0 || uint64(length32) > uint64(len(data)-off-4) || id32 == 0 || uint64(id32) > uint64(off+4) {
		return false
	}
	length, id := int(length32), int(id32)
	end := off + 4 + length
	if uint64(off+4-id) != p.lastOff {
		return false
	}
	cie := p.last.cie
	ptr := &p.ptr
	if PointerEncoding(cie.FDEEncoding) != PEPCRel|PESData4 || cie.AddressSize != uint8(ptr.AddrSize) {
		return false
	}
	pos := off + 8
	start := ptr.SectionAddr + uint64(pos) + uint64(int64(int32(p.u32(data[pos:]))))
	size := uint64(p.u32(data[pos+4:]))
	if ptr.AddrSize == 4 {
		start &= 0xffffffff
	}
	if e := start + size; e < start || ptr.AddrSize == 4 && e > 1<<32 {
		return false
	}
	pos += 8
	var lsda uint64
	if cie.hasAugData {
		if pos >= end || data[pos] >= 0x80 {
			return false
		}
		n := int(data[pos])
		pos++
		if n > end-pos {
			return false
		}
		if PointerEncoding(cie.LSDAEncoding) != PEOmit && n > 0 {
			lp := *ptr
			lp.FuncAddr = start
			var err error
			if lsda, _, err = lp.Decode(data[:pos+n], pos, PointerEncoding(cie.LSDAEncoding), 0); err != nil {
				return false
			}
		}
		pos += n
	}
	// Field by field: a composite literal is built on the stack, then
	// copied in 16-byte loads that wait for its narrower stores (40% of
	// this function's samples on libLLVM.so).
	f.Offset, f.CIE, f.Start, f.Size, f.Section = uint64(off), cie, start, size, 0
	f.Instructions, f.LSDA, f.Format64, f.InstructionsOffset = data[pos:end:end], lsda, false, uint64(pos)
	s.off = end
	return true
}

// Offset returns the section offset of the entry the Scanner reads next:
// once Next has returned false, the end of its part when the part ends
// where an entry does, past it when the part's last entry runs over its
// end (a cut that is not at an entry's start: CutByIndex), the end of the
// section when an entry's length stopped the reading.
func (s *Scanner) Offset() int { return s.off }

// Errors returns the problems with the part's entries read so far, in
// section order (Read's Frames.Errors for those entries).
func (s *Scanner) Errors() []*EntryError { return s.own.Errors }

// Cut cuts fr's section into at most n parts of about the same size, at
// entry boundaries, for a Scanner each: the parts are [cuts[k],
// cuts[k+1]), in section order, and together hold the entries (and give
// the FDEs and errors) Read reads. fdes[k] is how many entries of part k
// may be FDEs (their id says so; some may fail to decode): a bound for
// sizing what the part's FDEs make. Cut reads only the entries' headers.
func (fr *Frames) Cut(n int) (cuts, fdes []int) {
	weights := make([]int, max(n, 1))
	for k := range weights {
		weights[k] = 1
	}
	return fr.CutWeighted(weights)
}

// CutWeighted is Cut into at most len(weights) parts, part k of about
// weights[k]/sum(weights) of the section (a weight below 1 counts as 1).
func (fr *Frames) CutWeighted(weights []int) (cuts, fdes []int) {
	// Part k starts at the first entry at or past bounds[k].
	bounds := fr.bounds(weights)
	n, size := len(bounds), len(fr.Data)
	cuts = make([]int, 1, n+1)
	fdes = make([]int, 1, n)
	p := newParser(fr, &Frames{})
	data := fr.Data
	// The CIE id of 32-bit entries (64-bit ones take readHeader's way).
	cieID := uint32(0xffffffff)
	if p.eh {
		cieID = 0
	}
	for off := 0; off < size; {
		if len(cuts) < n && off >= bounds[len(cuts)] {
			cuts = append(cuts, off)
			fdes = append(fdes, 0)
		}
		// The usual entries, up to the next bound.
		stop := size
		if len(cuts) < n {
			stop = bounds[len(cuts)]
		}
		next, count := walkUsual(data, off, stop, fr.big, cieID)
		fdes[len(fdes)-1] += count
		if next != off {
			off = next
			continue
		}
		h, next, err := p.readHeader(off)
		if err != nil {
			if _, stop := err.(stopError); stop {
				break
			}
		} else if h.end != 0 && !p.isCIE(&h) {
			fdes[len(fdes)-1]++
		}
		off = next
	}
	return append(cuts, size), fdes
}

// bounds returns where the parts of CutWeighted's weights would start in
// bytes of the section: part k at bounds[k] (0 for the first).
func (fr *Frames) bounds(weights []int) []int {
	n := max(len(weights), 1)
	bounds := make([]int, n)
	total := 0
	for _, w := range weights {
		total += max(w, 1)
	}
	for k, sum := 1, 0; k < n; k++ {
		sum += max(weights[k-1], 1)
		bounds[k] = int(int64(len(fr.Data)) * int64(sum) / int64(total))
	}
	return bounds
}

// walkUsual walks the usual entries of data from off (a 32-bit length
// that holds the entry's id, within data): the one at off, then each
// that starts before stop. It returns where it stopped (off when the
// entry at off is not a usual one) and the FDEs among the entries walked
// (those whose id is not cieID). CutWeighted's loop, in a function of its
// own so that its variables stay in registers (in CutWeighted's body, with
// the parser beside it, they were spilled): 36 instructions per entry
// instead of 70 (docs/performance.md).
func walkUsual(data []byte, off, stop int, big bool, cieID uint32) (int, int) {
	fdes := 0
	for off <= len(data) {
		rest := data[off:]
		if len(rest) < 8 {
			break
		}
		// The length and the id in one load.
		var w uint64
		if big {
			w = bits.RotateLeft64(binary.BigEndian.Uint64(rest), 32)
		} else {
			w = binary.LittleEndian.Uint64(rest)
		}
		length, id := uint32(w), uint32(w>>32)
		if length < 4 || length >= 0xfffffff0 || uint64(length) > uint64(len(rest)-4) {
			break
		}
		if id != cieID {
			fdes++
		}
		if off += 4 + int(length); off >= stop {
			break
		}
	}
	return off, fdes
}
