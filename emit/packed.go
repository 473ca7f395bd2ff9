package emit

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// AppendPacked checks f as Encode would, appends its attribute record and
// FREs, encoded in the byte order of the section's ABI, to s.Packed, and
// appends f to s.FDEs without its FREs (FREOffset set to the record's
// offset). f.FREs may be reused once it returns. s must be packed
// already or empty, in version 3.
func (s *Section) AppendPacked(f FDE) error {
	if s.Packed == nil {
		if len(s.FDEs) > 0 {
			return fmt.Errorf("sframe: pack: section has %d unpacked FDEs", len(s.FDEs))
		}
		s.Packed = []byte{}
	}
	if s.Header.Version != Version3 {
		return fmt.Errorf("sframe: pack: version %d (only 3)", s.Header.Version)
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return fmt.Errorf("sframe: pack: unknown ABI %d", uint8(s.Header.ABI))
	}
	if len(f.FREs) > MaxFREsPerFDE {
		return fmt.Errorf("sframe: pack: FDE %d: %d FREs (at most %d)", len(s.FDEs), len(f.FREs), MaxFREsPerFDE)
	}
	ft := f.FREType()
	if ft.AddrSize() == 0 {
		return fmt.Errorf("sframe: pack: FDE %d: invalid FRE type %d", len(s.FDEs), uint8(ft))
	}
	// One pass: each FRE is checked, then appended; on an error the
	// record is taken back.
	off := len(s.Packed)
	b := append(s.Packed, 0, 0, f.Info, f.Info2, f.RepSize)
	order.PutUint16(b[off:], uint16(len(f.FREs)))
	for j := range f.FREs {
		e := &f.FREs[j]
		n, err := checkFRE(ft, f.Size, j, e)
		if err != nil {
			s.Packed = b[:off]
			return fmt.Errorf("sframe: pack: FDE %d: %w", len(s.FDEs), err)
		}
		p := len(b)
		b = slices.Grow(b, n)[:p+n]
		putFRE(b[p:], order, ft, e)
	}
	if uint64(len(b)) > math.MaxUint32 {
		s.Packed = b[:off]
		return fmt.Errorf("sframe: pack: FRE data past 4 GiB at FDE %d", len(s.FDEs))
	}
	s.Packed = b
	s.PackedFREs += len(f.FREs)
	f.FREs = nil
	f.FREOffset = uint32(off)
	s.FDEs = append(s.FDEs, f)
	return nil
}

// AppendPackedCopy appends to the packed section s a function of the given
// size whose SFrame FDE is that of FDE i: a copy of its attribute record
// and FREs, placed after the records so far (so that the FRE data stays in
// index order, as GNU ld writes it), with start offset 0 (for the caller
// to set). The FREs must fit the new size: the last one may not start past
// it. For a function that lowers to the same FREs as an earlier one (most
// often, from the same CFI instructions).
func (s *Section) AppendPackedCopy(i int, size uint32) error {
	if s.Packed == nil || i < 0 || i >= len(s.FDEs) {
		return fmt.Errorf("sframe: pack: no packed FDE %d to copy (%d FDEs)", i, len(s.FDEs))
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return fmt.Errorf("sframe: pack: unknown ABI %d", uint8(s.Header.ABI))
	}
	f := s.FDEs[i]
	start := int(f.FREOffset)
	n, nFREs, last, err := packedRecord(s.Packed, start, order, f.FREType())
	if err != nil {
		return fmt.Errorf("sframe: pack: FDE %d: %w", i, err)
	}
	if nFREs > 0 && last > size {
		return fmt.Errorf("sframe: pack: FDE %d: its last FRE starts at %#x, past the size %#x", i, last, size)
	}
	off := len(s.Packed)
	if uint64(off)+uint64(n) > math.MaxUint32 {
		return fmt.Errorf("sframe: pack: FRE data past 4 GiB at FDE %d", len(s.FDEs))
	}
	s.Packed = append(s.Packed, s.Packed[start:start+n]...)
	s.PackedFREs += nFREs
	f.Size = size
	f.StartOffset = 0
	f.FREOffset = uint32(off)
	s.FDEs = append(s.FDEs, f)
	return nil
}

// packedRecord walks the attribute record at b[start:] and its FREs of type
// ft: its length in bytes, its number of FREs and the start of the last.
func packedRecord(b []byte, start int, order binary.ByteOrder, ft FREType) (n, nFREs int, last uint32, err error) {
	as := ft.AddrSize()
	if as == 0 || start < 0 || start > len(b)-FDEAttrSize {
		return 0, 0, 0, fmt.Errorf("no attribute record at %#x", start)
	}
	nFREs = int(order.Uint16(b[start:]))
	p := start + FDEAttrSize
	for j := 0; j < nFREs; j++ {
		if p > len(b)-as-1 {
			return 0, 0, 0, fmt.Errorf("FRE %d runs past the packed data", j)
		}
		switch as {
		case 1:
			last = uint32(b[p])
		case 2:
			last = uint32(order.Uint16(b[p:]))
		default:
			last = order.Uint32(b[p:])
		}
		e := FRE{Info: b[p+as]}
		p += as + 1 + e.DataWordCount()*e.DataWordSize().Bytes()
	}
	if p > len(b) {
		return 0, 0, 0, fmt.Errorf("FREs run past the packed data")
	}
	return p - start, nFREs, last, nil
}
