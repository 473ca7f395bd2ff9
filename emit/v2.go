package emit

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// encodeV2 is Encode of a version 2 section: each record's FREs without
// the record, in FREData's order, and 20-byte FDEs holding what the
// records held (FRE count, Info, RepSize) and the FREs' offset.
func (s *Section) encodeV2(order binary.ByteOrder) ([]byte, error) {
	recs, err := s.checkV2(order)
	if err != nil {
		return nil, err
	}
	offs, written, freLen := s.layoutV2(recs)
	hdrEnd := HeaderSize + len(s.Header.AuxHeader)
	fdeLen := uint64(len(s.Index)) * FDEEntrySizeV2
	if fdeLen > math.MaxUint32 || uint64(s.FRECount) > math.MaxUint32 ||
		uint64(hdrEnd)+fdeLen+freLen+uint64(len(s.Trailer)) > math.MaxInt32 {
		return nil, fmt.Errorf("encode: section too large (%d FDEs, %d FREs, %d FRE bytes)", len(s.Index), s.FRECount, freLen)
	}
	b := make([]byte, uint64(hdrEnd)+fdeLen+freLen+uint64(len(s.Trailer)))
	s.putHeader(b, order, uint64(s.FRECount), freLen, fdeLen)
	for i := range s.Index {
		e := &s.Index[i]
		k, _ := slices.BinarySearch(recs, e.FREOffset)
		attr := s.FREData[e.FREOffset:]
		p := hdrEnd + i*FDEEntrySizeV2
		order.PutUint32(b[p:], uint32(int32(e.StartOffset)))
		order.PutUint32(b[p+4:], e.Size)
		order.PutUint32(b[p+8:], offs[k])
		order.PutUint32(b[p+12:], uint32(order.Uint16(attr)))
		b[p+16] = attr[2]
		b[p+17] = attr[4]
	}
	q := hdrEnd + int(fdeLen)
	for k, off := range recs {
		if written[k] {
			q += copy(b[q:], s.FREData[int(off)+FDEAttrSize:s.recordEnd(recs, k)])
		}
	}
	copy(b[q:], s.Trailer)
	return b, nil
}

// recordEnd returns where record k of recs ends in FREData.
func (s *Section) recordEnd(recs []uint32, k int) int {
	if k+1 < len(recs) {
		return int(recs[k+1])
	}
	return len(s.FREData)
}

// layoutV2 lays out the FREs of the records recs in version 2: the offset
// of each record's FREs in the FRE sub-section, whether they are written
// there (not with SharedV2, for FREs that repeat an earlier record's) and
// the sub-section's length.
func (s *Section) layoutV2(recs []uint32) (offs []uint32, written []bool, freLen uint64) {
	offs, written = make([]uint32, len(recs)), make([]bool, len(recs))
	var first map[string]uint32
	if s.SharedV2 {
		first = make(map[string]uint32)
	}
	for k, off := range recs {
		start, end := int(off)+FDEAttrSize, s.recordEnd(recs, k)
		if first != nil && end > start {
			// The FRE type, then the FREs.
			key := string(append([]byte{s.FREData[off+2] & 0xf}, s.FREData[start:end]...))
			if at, ok := first[key]; ok {
				offs[k] = at
				continue
			}
			first[key] = uint32(freLen)
		}
		offs[k], written[k] = uint32(freLen), true
		freLen += uint64(end - start)
	}
	return offs, written, freLen
}

// records returns the offsets of the records of FREData, which follow
// each other from its start to its end.
func (s *Section) records(order binary.ByteOrder) ([]uint32, error) {
	var recs []uint32
	for p := 0; p < len(s.FREData); {
		n, _, _, err := recordLen(s.FREData, p, order)
		if err != nil {
			return nil, fmt.Errorf("encode: FRE data: %w", err)
		}
		recs = append(recs, uint32(p))
		p += n
	}
	return recs, nil
}

// checkV2 checks what a version 2 section's FDEs cannot hold (Info2,
// start offsets past 32 bits) and that each FRE offset is at a record,
// and returns the offsets of the records (records).
func (s *Section) checkV2(order binary.ByteOrder) ([]uint32, error) {
	recs, err := s.records(order)
	if err != nil {
		return nil, err
	}
	for i := range s.Index {
		e := &s.Index[i]
		if _, found := slices.BinarySearch(recs, e.FREOffset); !found {
			return nil, fmt.Errorf("encode: FDE %d: FRE offset %#x is not at a record", i, e.FREOffset)
		}
		if info2 := s.FREData[e.FREOffset+3]; info2 != 0 {
			return nil, fmt.Errorf("encode: FDE %d: info2 %#x cannot be written in version 2", i, info2)
		}
		if e.StartOffset != int64(int32(e.StartOffset)) {
			return nil, fmt.Errorf("encode: FDE %d: start offset %#x does not fit the 32-bit version 2 field", i, e.StartOffset)
		}
	}
	return recs, nil
}
