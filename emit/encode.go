package emit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Encode writes the section in the byte order of its ABI, with the layout
// GNU as and ld write: the header (fdeoff 0, freoff right after the FDE
// index, counts computed), the FDE index in FDEs order (of a packed
// section, Index order), then each function's FRE data (for version 3 its
// attribute record then its FREs) in increasing FREOffset order, ties in
// index order, then Trailer. Each FDE's FRE offset is written for the new
// layout; s.FDEs is not modified.
//
// Header.Version selects the format: 3, or 2 (20-byte FDEs, no attribute
// records, for readers that only know version 2; Info2 must be 0).
//
// Encode checks what it writes and returns an error rather than bytes a
// reader would misread: the ABI is known, flags are valid for the version,
// each FRE's data-word count equals len(Words) and is at most 6, its size
// code is valid, every word fits its size (signed or unsigned range), every
// start address fits the FDE's FRE type and is not past the function size,
// the trailer is zero padding, and counts fit their fields.
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
// packed section as if it had been sorted by function start (as ld sorts
// it), without reordering the section: entry j of the index is FDE
// Order[j], its start field that of Starts[Order[j]] for a section at
// Addr (as SetFuncStart sets it for position j), and the header has
// FlagFDESorted. For a caller that has the start order of a big index
// (lower.Result.EncodePlaced): moving the FDEs into that order only to
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
	// Head, when its capacity holds them (PackedOffset bytes), is where
	// the header and the index (the first of the parts) are written, for
	// a caller that has memory for them already; its contents do not
	// matter.
	Head []byte
}

// EncodeParts is Encode for a writer that takes the section in pieces:
// their concatenation is what Encode returns. For a packed section the
// pieces are the header and FDE index, then s.Packed itself, not copied
// (the section must not change until they are written), then the trailer:
// a big section is not copied into one buffer. With a placement (packed
// sections only), the index is written as it says; s does not change.
func (s *Section) EncodeParts(place *Placement) ([][]byte, error) {
	if place == nil {
		return s.encodeParts(nil)
	}
	if s.Packed == nil {
		return nil, fmt.Errorf("encode: a placement needs a packed section")
	}
	n := len(s.Index)
	if place.Order != nil && len(place.Order) != n || len(place.Starts) != n {
		return nil, fmt.Errorf("encode: %d FDEs, an order of %d and %d starts", n, len(place.Order), len(place.Starts))
	}
	// putIndex checks the order and the entries as it writes them.
	return s.encodeParts(place)
}

// encodeParts is EncodeParts, of the index placed as sorted says when it
// is not nil (packed sections only).
func (s *Section) encodeParts(sorted *Placement) ([][]byte, error) {
	h := &s.Header
	v2 := false
	switch h.Version {
	case Version3:
	case Version2:
		v2 = true
	default:
		return nil, fmt.Errorf("encode: unsupported version %d", h.Version)
	}
	order := h.ABI.ByteOrder()
	if order == nil {
		return nil, fmt.Errorf("encode: unknown ABI %d", uint8(h.ABI))
	}
	allFlags := FlagFDESorted | FlagFDEFuncStartPCRel
	if v2 {
		allFlags |= FlagFramePointer
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
	entSize := FDEIndexEntrySize
	attrSize := FDEAttrSize
	if v2 {
		entSize, attrSize = FDEEntrySizeV2, 0
	}

	var sizes []int // what each function's FRE data takes (packed: not needed)
	if s.Packed == nil {
		sizes = make([]int, len(s.FDEs))
	}
	numFREs, freLen, err := s.measure(sizes, attrSize, v2, sorted == nil)
	if err != nil {
		return nil, err
	}
	hdrEnd := HeaderSize + len(h.AuxHeader)
	fdeLen := uint64(s.NumFDEs()) * uint64(entSize)
	if s.Packed != nil {
		return s.encodePacked(order, numFREs, uint64(hdrEnd), fdeLen, sorted)
	}

	// Lay out the FRE data in FREOffset order, ties in index order (or
	// shared).
	freOffs, _, err := s.layout(sizes, v2)
	if err != nil {
		return nil, err
	}

	total := hdrEnd + int(fdeLen) + int(freLen) + len(s.Trailer)
	b := make([]byte, total)
	s.putHeader(b, order, numFREs, uint64(freLen), uint64(fdeLen))

	fdeStart := hdrEnd
	freStart := hdrEnd + int(fdeLen)
	for i := range s.FDEs {
		f := &s.FDEs[i]
		p := fdeStart + i*entSize
		if v2 {
			order.PutUint32(b[p:], uint32(int32(f.StartOffset)))
			order.PutUint32(b[p+4:], f.Size)
			order.PutUint32(b[p+8:], freOffs[i])
			order.PutUint32(b[p+12:], uint32(len(f.FREs)))
			b[p+16] = f.Info
			b[p+17] = f.RepSize
		} else {
			order.PutUint64(b[p:], uint64(f.StartOffset))
			order.PutUint32(b[p+8:], f.Size)
			order.PutUint32(b[p+12:], freOffs[i])
			q := freStart + int(freOffs[i])
			order.PutUint16(b[q:], uint16(len(f.FREs)))
			b[q+2] = f.Info
			b[q+3] = f.Info2
			b[q+4] = f.RepSize
		}
		putFREs(b[freStart+int(freOffs[i])+attrSize:], order, f)
	}
	copy(b[freStart+int(freLen):], s.Trailer)
	return [][]byte{b}, nil
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

// encodePacked is EncodeParts for a checked packed section: the header
// and the FDE index with the FREOffsets as stored (in the order and with
// the start fields sorted gives, if not nil), then Packed as it is, then
// the trailer. With sorted, putIndex checks the index entries (measure
// does not).
func (s *Section) encodePacked(order binary.ByteOrder, numFREs, hdrEnd, fdeLen uint64, sorted *Placement) ([][]byte, error) {
	var b []byte
	if sorted != nil && uint64(cap(sorted.Head)) >= hdrEnd+fdeLen {
		b = sorted.Head[:hdrEnd+fdeLen]
	} else {
		b = make([]byte, hdrEnd+fdeLen)
	}
	s.putHeader(b, order, numFREs, uint64(len(s.Packed)), fdeLen)
	if sorted != nil {
		b[3] |= uint8(FlagFDESorted)
	}
	if err := s.putIndex(b[hdrEnd:], hdrEnd, sorted, order == binary.BigEndian); err != nil {
		return nil, err
	}
	parts := [][]byte{b, s.Packed}
	if len(s.Trailer) > 0 {
		parts = append(parts, s.Trailer)
	}
	return parts, nil
}

// putIndex writes the packed section's FDE index at the start of b, which
// starts at offset at of the section, in big- or little-endian order:
// entry j is FDE j, or FDE sorted.Order[j] with the start field of
// sorted.Starts. (Calls through binary.ByteOrder, one per field, would
// cost more than the rest.) With sorted, it checks what measurePacked
// leaves to it: that the order is a permutation that sorts the FDEs and
// each entry's FRE offset is within Packed (one pass over the index
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
	freLen := uint64(len(s.Packed))
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
			return packedOffsetError(i, f.FREOffset, freLen)
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

// PackedOffset returns where s.Packed starts in the bytes Encode writes
// of a packed section: after the header, the auxiliary header and the FDE
// index. Place-like changes (start fields, index order) leave s.Packed as
// it is, so a writer may write it there before the index is final.
func (s *Section) PackedOffset() int {
	return HeaderSize + len(s.Header.AuxHeader) + s.NumFDEs()*FDEIndexEntrySize
}

// Size returns the length of the bytes Encode writes, without writing
// them. It checks the FREs and counts as Encode does (the header and
// trailer checks are Encode's alone). The size depends neither on the
// FDEs' start fields nor on their order.
func (s *Section) Size() (int, error) {
	v2 := s.Header.Version == Version2
	entSize, attrSize := FDEIndexEntrySize, FDEAttrSize
	if v2 {
		entSize, attrSize = FDEEntrySizeV2, 0
	}
	if s.Header.Version != Version3 && !v2 {
		return 0, fmt.Errorf("encode: unsupported version %d", s.Header.Version)
	}
	_, freLen, err := s.measure(nil, attrSize, v2, true)
	if err != nil {
		return 0, err
	}
	return HeaderSize + len(s.Header.AuxHeader) + s.NumFDEs()*entSize + int(freLen) + len(s.Trailer), nil
}

// measure checks each function's FRE data and stores its size (with the
// attribute record) in sizes[i] when sizes is not nil; it returns the
// totals, checked against the header's fields. Of a packed section it
// checks the index entries only with entries.
func (s *Section) measure(sizes []int, attrSize int, v2, entries bool) (numFREs, freLen uint64, err error) {
	if s.Packed != nil {
		return s.measurePacked(v2, entries)
	}
	if sizes == nil && s.SharedFREs {
		sizes = make([]int, len(s.FDEs))
	}
	for i := range s.FDEs {
		n, err := fdeDataSize(&s.FDEs[i], v2)
		if err != nil {
			return 0, 0, fmt.Errorf("encode: FDE %d: %w", i, err)
		}
		if sizes != nil {
			sizes[i] = attrSize + n
		}
		numFREs += uint64(len(s.FDEs[i].FREs))
		freLen += uint64(attrSize + n)
	}
	if s.SharedFREs {
		if _, freLen, err = s.layout(sizes, v2); err != nil {
			return 0, 0, err
		}
	}
	entSize := uint64(FDEIndexEntrySize)
	if v2 {
		entSize = FDEEntrySizeV2
	}
	fdeLen := uint64(len(s.FDEs)) * entSize
	hdrEnd := uint64(HeaderSize + len(s.Header.AuxHeader))
	if fdeLen > math.MaxUint32 || numFREs > math.MaxUint32 || freLen > math.MaxUint32 ||
		hdrEnd+fdeLen+freLen+uint64(len(s.Trailer)) > math.MaxInt32 {
		return 0, 0, fmt.Errorf("encode: section too large (%d FDEs, %d FREs, %d FRE bytes)",
			len(s.FDEs), numFREs, freLen)
	}
	return numFREs, freLen, nil
}

// measurePacked checks a packed section: version 3, its functions in
// Index, not FDEs, and (with entries) each FREOffset at a record of Packed
// (AppendPacked checked the records themselves).
func (s *Section) measurePacked(v2, entries bool) (numFREs, freLen uint64, err error) {
	if v2 {
		return 0, 0, fmt.Errorf("encode: a packed section is version 3")
	}
	freLen = uint64(len(s.Packed))
	if len(s.FDEs) != 0 {
		return 0, 0, fmt.Errorf("encode: a packed section has %d FDEs (its functions are in Index)", len(s.FDEs))
	}
	for i := range s.Index {
		if !entries {
			break
		}
		if f := &s.Index[i]; uint64(f.FREOffset)+FDEAttrSize > freLen {
			return 0, 0, packedOffsetError(i, f.FREOffset, freLen)
		}
	}
	fdeLen := uint64(len(s.Index)) * FDEIndexEntrySize
	hdrEnd := uint64(HeaderSize + len(s.Header.AuxHeader))
	if fdeLen > math.MaxUint32 || s.PackedFREs < 0 || uint64(s.PackedFREs) > math.MaxUint32 || freLen > math.MaxUint32 ||
		hdrEnd+fdeLen+freLen+uint64(len(s.Trailer)) > math.MaxInt32 {
		return 0, 0, fmt.Errorf("encode: section too large (%d FDEs, %d FREs, %d FRE bytes)",
			len(s.Index), s.PackedFREs, freLen)
	}
	return uint64(s.PackedFREs), freLen, nil
}

// packedOffsetError is the error of index entry i, whose FRE offset off
// is past the freLen bytes of packed FRE data.
func packedOffsetError(i int, off uint32, freLen uint64) error {
	return fmt.Errorf("encode: FDE %d: FRE offset %#x past the packed FRE data (%#x bytes)", i, off, freLen)
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fdeDataSize checks f's FREs and returns their encoded size.
func fdeDataSize(f *FDE, v2 bool) (int, error) {
	ft := f.FREType()
	as := ft.AddrSize()
	if as == 0 {
		return 0, fmt.Errorf("invalid FRE type %d", uint8(ft))
	}
	if v2 {
		if f.Info2 != 0 {
			return 0, fmt.Errorf("info2 %#x cannot be written in version 2", f.Info2)
		}
		if f.StartOffset != int64(int32(f.StartOffset)) {
			return 0, fmt.Errorf("start offset %#x does not fit the 32-bit version 2 field", f.StartOffset)
		}
	} else if len(f.FREs) > MaxFREsPerFDE {
		return 0, fmt.Errorf("%d FREs (at most %d)", len(f.FREs), MaxFREsPerFDE)
	}
	n := 0
	for j := range f.FREs {
		m, err := checkFRE(ft, f.Size, j, &f.FREs[j])
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
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

// putFREs writes f's (checked) FREs at the start of b.
func putFREs(b []byte, order binary.ByteOrder, f *FDE) {
	ft := f.FREType()
	p := 0
	for j := range f.FREs {
		p += putFRE(b[p:], order, ft, &f.FREs[j])
	}
}

// putFRE writes the (checked) FRE e of type ft at the start of b and
// returns its size.
func putFRE(b []byte, order binary.ByteOrder, ft FREType, e *FRE) int {
	p := 0
	switch ft {
	case FREAddr1:
		b[p] = uint8(e.StartAddr)
	case FREAddr2:
		putUint16(b[p:], order, uint16(e.StartAddr))
	default:
		putUint32(b[p:], order, e.StartAddr)
	}
	p += ft.AddrSize()
	b[p] = e.Info
	p++
	switch e.DataWordSize() {
	case DataWord1B:
		for _, w := range e.Words {
			b[p] = uint8(w)
			p++
		}
	case DataWord2B:
		for _, w := range e.Words {
			putUint16(b[p:], order, uint16(w))
			p += 2
		}
	default:
		for _, w := range e.Words {
			putUint32(b[p:], order, uint32(w))
			p += 4
		}
	}
	return p
}

// putUint16 and putUint32 are order.PutUint16 and PutUint32 without the
// interface call for the standard library's two orders.
func putUint16(b []byte, order binary.ByteOrder, v uint16) {
	switch order {
	case binary.LittleEndian:
		binary.LittleEndian.PutUint16(b, v)
	case binary.BigEndian:
		binary.BigEndian.PutUint16(b, v)
	default:
		order.PutUint16(b, v)
	}
}

func putUint32(b []byte, order binary.ByteOrder, v uint32) {
	switch order {
	case binary.LittleEndian:
		binary.LittleEndian.PutUint32(b, v)
	case binary.BigEndian:
		binary.BigEndian.PutUint32(b, v)
	default:
		order.PutUint32(b, v)
	}
}
