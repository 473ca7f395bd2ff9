package emit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Encode writes the section in the byte order of its ABI, with the layout
// GNU as and ld write: the header (fdeoff 0, freoff right after the FDE
// index, counts computed), the FDE index in Index order, then FREData as
// it is, then Trailer.
//
// Header.Version selects the format: 3, or 2 (20-byte FDEs, no attribute
// records, for readers that only know version 2): each function's FRE
// count, Info and RepSize move into its FDE, the records' FREs stay in
// their order, and the FRE offsets are those of the FREs without the
// records. Version 2 has no Info2 (it must be 0) and 32-bit start fields.
//
// Encode checks what it writes and returns an error rather than bytes a
// reader would misread: the ABI is known, flags are valid for the version,
// every FRE offset is at a record of FREData, the trailer is zero padding,
// and counts fit their fields. The FREs themselves were checked as they
// were appended (AppendFDE) or decoded (Decode).
func (s *Section) Encode() ([]byte, error) {
	parts, err := s.EncodeParts(nil)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b, nil
}

// Placement is how EncodeParts writes the FDE index of a linked file's
// section as if it had been sorted by function start (as ld sorts
// it), without reordering the section: entry j of the index is FDE
// Order[j], its start field that of Starts[Order[j]] for a section at
// Addr (as SetFuncStart sets it for position j), and the header has
// FlagFDESorted. For a caller that has the start order of a big index
// (lower.Result.EncodeThenPlace): moving the FDEs into that order only to
// write them costs more than writing them from where they are.
type Placement struct {
	// Order is a permutation of the FDEs' indices (nil: they are in
	// start order already) that sorts them as lower's Place does: by
	// start as a signed offset from the section, ties in index order.
	// It is checked as the entries are written (else ErrNotSorted).
	Order []int
	// Starts holds the absolute start of each FDE's function.
	Starts []uint64
	// Addr is the address of the section.
	Addr uint64
	// Head, when its capacity holds them (FREDataOffset bytes), is where
	// the header and the index (the first of the parts) are written, for
	// a caller that has memory for them already; its contents do not
	// matter.
	Head []byte
}

// EncodeParts is Encode for a writer that takes the section in pieces:
// their concatenation is what Encode returns. In version 3 the pieces are
// the header and FDE index, then s.FREData itself, not copied (the
// section must not change until they are written), then the trailer: a
// big section is not copied into one buffer. With a placement (version 3
// only), the index is written as it says; s does not change.
func (s *Section) EncodeParts(place *Placement) ([][]byte, error) {
	if place != nil {
		n := len(s.Index)
		if place.Order != nil && len(place.Order) != n || len(place.Starts) != n {
			return nil, fmt.Errorf("encode: %d FDEs, an order of %d and %d starts", n, len(place.Order), len(place.Starts))
		}
		if s.Header.Version != Version3 {
			return nil, fmt.Errorf("encode: a placement writes a version 3 index")
		}
	}
	order, err := s.checkHeader()
	if err != nil {
		return nil, err
	}
	if s.Header.Version == Version2 {
		b, err := s.encodeV2(order)
		if err != nil {
			return nil, err
		}
		return [][]byte{b}, nil
	}
	// putIndex checks the order and the entries as it writes them.
	if err := s.checkSize(place == nil); err != nil {
		return nil, err
	}
	hdrEnd := uint64(HeaderSize + len(s.Header.AuxHeader))
	fdeLen := uint64(len(s.Index)) * FDEIndexEntrySize
	var b []byte
	if place != nil && uint64(cap(place.Head)) >= hdrEnd+fdeLen {
		b = place.Head[:hdrEnd+fdeLen]
	} else {
		b = make([]byte, hdrEnd+fdeLen)
	}
	s.putHeader(b, order, uint64(s.FRECount), uint64(len(s.FREData)), fdeLen)
	if place != nil {
		b[3] |= uint8(FlagFDESorted)
	}
	if err := s.putIndex(b[hdrEnd:], hdrEnd, place, order == binary.BigEndian); err != nil {
		return nil, err
	}
	parts := [][]byte{b, s.FREData}
	if len(s.Trailer) > 0 {
		parts = append(parts, s.Trailer)
	}
	return parts, nil
}

// checkHeader checks what Encode writes of the header and the trailer,
// and returns the byte order of the section's ABI.
func (s *Section) checkHeader() (binary.ByteOrder, error) {
	h := &s.Header
	allFlags := FlagFDESorted | FlagFDEFuncStartPCRel
	switch h.Version {
	case Version3:
	case Version2:
		allFlags |= FlagFramePointer
	default:
		return nil, fmt.Errorf("encode: unsupported version %d", h.Version)
	}
	order := h.ABI.ByteOrder()
	if order == nil {
		return nil, fmt.Errorf("encode: unknown ABI %d", uint8(h.ABI))
	}
	if h.Flags&^allFlags != 0 {
		return nil, fmt.Errorf("encode: flags %#x not valid in version %d", uint8(h.Flags), h.Version)
	}
	for i, c := range s.Trailer {
		if c != 0 {
			return nil, fmt.Errorf("encode: trailer byte %d is %#02x (only zero padding may follow the FRE sub-section)", i, c)
		}
	}
	if len(h.AuxHeader) > math.MaxUint8 {
		return nil, fmt.Errorf("encode: auxiliary header of %d bytes (at most 255)", len(h.AuxHeader))
	}
	return order, nil
}

// putHeader writes the section header (fdeoff 0, freoff right after the
// FDE index) and the auxiliary header at the start of b.
func (s *Section) putHeader(b []byte, order binary.ByteOrder, numFREs, freLen, fdeLen uint64) {
	h := &s.Header
	order.PutUint16(b, Magic)
	b[2] = h.Version
	b[3] = uint8(h.Flags)
	b[4] = uint8(h.ABI)
	b[5] = uint8(h.CFAFixedFPOffset)
	b[6] = uint8(h.CFAFixedRAOffset)
	b[7] = uint8(len(h.AuxHeader))
	order.PutUint32(b[8:], uint32(s.NumFDEs()))
	order.PutUint32(b[12:], uint32(numFREs))
	order.PutUint32(b[16:], uint32(freLen))
	order.PutUint32(b[20:], 0)
	order.PutUint32(b[24:], uint32(fdeLen))
	copy(b[HeaderSize:], h.AuxHeader)
}

// putIndex writes the version 3 FDE index at the start of b, which
// starts at offset at of the section, in big- or little-endian order:
// entry j is FDE j, or FDE sorted.Order[j] with the start field of
// sorted.Starts. (Calls through binary.ByteOrder, one per field, would
// cost more than the rest.) With sorted, it checks what checkSize
// leaves to it: that the order is a permutation that sorts the FDEs and
// each entry's FRE offset is within FREData (one pass over the index
// instead of three); a big index is written in two halves at once.
func (s *Section) putIndex(b []byte, at uint64, sorted *Placement, big bool) error {
	b = b[:len(s.Index)*FDEIndexEntrySize]
	if sorted == nil {
		for i := range s.Index {
			f := &s.Index[i]
			putEntry(b[i*FDEIndexEntrySize:][:FDEIndexEntrySize], uint64(f.StartOffset), f, big)
		}
		return nil
	}
	// Each entry's key (its offset from the section, signed, made
	// unsigned keeping the order) and index must be above the last
	// one's: then the order is a permutation too (no index twice) when
	// each is in range.
	n := len(s.Index)
	if n < parallelIndex {
		return s.putSorted(b, at, sorted, big, 0, n)
	}
	// Two halves at once.
	h := n / 2
	var errs [2]error
	done := make(chan struct{})
	go func() {
		errs[1] = s.putSorted(b, at, sorted, big, h, n)
		close(done)
	}()
	errs[0] = s.putSorted(b, at, sorted, big, 0, h)
	<-done
	switch {
	case errs[0] != nil:
		return errs[0]
	case errs[1] != nil:
		return errs[1]
	}
	i, last := h, h-1
	if sorted.Order != nil {
		i, last = sorted.Order[h], sorted.Order[h-1]
	}
	return notAfter(sorted, i, last)
}

// parallelIndex is the number of FDEs from which putIndex writes a sorted
// index in two halves at once.
const parallelIndex = 1 << 15

// putSorted writes entries j0 to j1 of the sorted index at the start of b
// (see putIndex).
func (s *Section) putSorted(b []byte, at uint64, sorted *Placement, big bool, j0, j1 int) error {
	// The start field is relative to the section, or (PC-relative) to
	// the field itself: FieldOffset(j).
	base := sorted.Addr
	step := uint64(0)
	if s.Header.Flags&FlagFDEFuncStartPCRel != 0 {
		base += at + uint64(j0)*FDEIndexEntrySize
		step = FDEIndexEntrySize
	}
	starts, order := sorted.Starts, sorted.Order
	n := len(s.Index)
	freLen := uint64(len(s.FREData))
	lastKey, last := uint64(0), -1
	for j := j0; j < j1; j++ {
		i := j
		if order != nil {
			if i = order[j]; uint(i) >= uint(n) {
				return fmt.Errorf("encode: the order is not a permutation of the %d FDEs (%d)", n, i)
			}
		}
		f := &s.Index[i]
		if uint64(f.FREOffset)+FDEAttrSize > freLen {
			return freOffsetError(i, f.FREOffset, freLen)
		}
		key := (starts[i] - sorted.Addr) ^ 1<<63
		if key < lastKey || key == lastKey && i <= last {
			return notAfter(sorted, i, last)
		}
		lastKey, last = key, i
		putEntry(b[j*FDEIndexEntrySize:][:FDEIndexEntrySize], starts[i]-base, f, big)
		base += step
	}
	return nil
}

// putEntry writes the index entry of f with start field start in e.
func putEntry(e []byte, start uint64, f *IndexEntry, big bool) {
	if big {
		binary.BigEndian.PutUint64(e, start)
		binary.BigEndian.PutUint32(e[8:], f.Size)
		binary.BigEndian.PutUint32(e[12:], f.FREOffset)
	} else {
		binary.LittleEndian.PutUint64(e, start)
		binary.LittleEndian.PutUint32(e[8:], f.Size)
		binary.LittleEndian.PutUint32(e[12:], f.FREOffset)
	}
}

// notAfter returns putIndex's error when FDE i may not follow FDE last in
// the sorted index (nil when it may).
func notAfter(sorted *Placement, i, last int) error {
	key := func(i int) uint64 { return (sorted.Starts[i] - sorted.Addr) ^ 1<<63 }
	switch k, l := key(i), key(last); {
	case k > l || k == l && i > last:
		return nil
	case i == last:
		return fmt.Errorf("encode: the order is not a permutation of the %d FDEs (%d twice)", len(sorted.Starts), i)
	}
	return fmt.Errorf("encode: FDE %d (start %#x) after FDE %d (start %#x): %w", i, sorted.Starts[i], last, sorted.Starts[last], ErrNotSorted)
}

// ErrNotSorted is the error of EncodeParts (wrapped) when the order given
// does not sort the functions by start as Place does.
var ErrNotSorted = errors.New("the order does not sort the functions by start")

// FREDataOffset returns where FREData starts in the bytes Encode writes
// in version 3: after the header, the auxiliary header and the FDE index.
// Place-like changes (start fields, index order) leave FREData as it is,
// so a writer may write it there before the index is final.
func (s *Section) FREDataOffset() int {
	return HeaderSize + len(s.Header.AuxHeader) + len(s.Index)*FDEIndexEntrySize
}

// Size returns the length of the bytes Encode writes, without writing
// them. It checks the counts and (version 2) what the FDEs hold as Encode
// does (the header and trailer checks are Encode's alone). The size depends neither on the FDEs' start
// fields nor on their order.
func (s *Section) Size() (int, error) {
	switch s.Header.Version {
	case Version3:
		if err := s.checkSize(true); err != nil {
			return 0, err
		}
		return s.FREDataOffset() + len(s.FREData) + len(s.Trailer), nil
	case Version2:
		order := s.Header.ABI.ByteOrder()
		if order == nil {
			return 0, fmt.Errorf("encode: unknown ABI %d", uint8(s.Header.ABI))
		}
		recs, err := s.checkV2(order)
		if err != nil {
			return 0, err
		}
		_, _, freLen := s.layoutV2(recs)
		return HeaderSize + len(s.Header.AuxHeader) + len(s.Index)*FDEEntrySizeV2 + int(freLen) + len(s.Trailer), nil
	}
	return 0, fmt.Errorf("encode: unsupported version %d", s.Header.Version)
}

// checkSize checks that the section's counts fit their fields and, with
// entries, that each FRE offset is within FREData.
func (s *Section) checkSize(entries bool) error {
	freLen := uint64(len(s.FREData))
	for i := range s.Index {
		if !entries {
			break
		}
		if f := &s.Index[i]; uint64(f.FREOffset)+FDEAttrSize > freLen {
			return freOffsetError(i, f.FREOffset, freLen)
		}
	}
	fdeLen := uint64(len(s.Index)) * FDEIndexEntrySize
	hdrEnd := uint64(HeaderSize + len(s.Header.AuxHeader))
	if fdeLen > math.MaxUint32 || s.FRECount < 0 || uint64(s.FRECount) > math.MaxUint32 || freLen > math.MaxUint32 ||
		hdrEnd+fdeLen+freLen+uint64(len(s.Trailer)) > math.MaxInt32 {
		return fmt.Errorf("encode: section too large (%d FDEs, %d FREs, %d FRE bytes)",
			len(s.Index), s.FRECount, freLen)
	}
	return nil
}

// freOffsetError is the error of index entry i, whose FRE offset off is
// past the freLen bytes of FRE data.
func freOffsetError(i int, off uint32, freLen uint64) error {
	return fmt.Errorf("encode: FDE %d: FRE offset %#x past the FRE data (%#x bytes)", i, off, freLen)
}

// checkFRE checks FRE j, e, of a function of type ft and the given size,
// and returns its encoded size.
func checkFRE(ft FREType, size uint32, j int, e *FRE) (int, error) {
	if uint64(e.StartAddr) >= ft.Limit() {
		return 0, fmt.Errorf("FRE %d: start address %#x does not fit %s", j, e.StartAddr, ft)
	}
	if e.StartAddr > size {
		return 0, fmt.Errorf("FRE %d: start address %#x past the function size %#x", j, e.StartAddr, size)
	}
	ws := e.DataWordSize()
	if ws.Bytes() == 0 {
		return 0, fmt.Errorf("FRE %d: invalid data-word size code %d", j, uint8(ws))
	}
	if c := e.DataWordCount(); c != len(e.Words) {
		return 0, fmt.Errorf("FRE %d: info byte %#02x says %d data words, FRE has %d", j, e.Info, c, len(e.Words))
	}
	if len(e.Words) > MaxDataWords {
		return 0, fmt.Errorf("FRE %d: %d data words (at most %d)", j, len(e.Words), MaxDataWords)
	}
	for k, w := range e.Words {
		if !wordFits(w, ws) {
			return 0, fmt.Errorf("FRE %d: data word %d (%d) does not fit %d bytes", j, k, w, ws.Bytes())
		}
	}
	return ft.AddrSize() + 1 + len(e.Words)*ws.Bytes(), nil
}
