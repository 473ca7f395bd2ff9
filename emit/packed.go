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
	n, err := fdeDataSize(&f, false)
	if err != nil {
		return fmt.Errorf("sframe: pack: FDE %d: %w", len(s.FDEs), err)
	}
	off := len(s.Packed)
	if uint64(off)+uint64(FDEAttrSize+n) > math.MaxUint32 {
		return fmt.Errorf("sframe: pack: FRE data past 4 GiB at FDE %d", len(s.FDEs))
	}
	s.Packed = appendRecord(s.Packed, order, &f, n)
	s.PackedFREs += len(f.FREs)
	f.FREs = nil
	f.FREOffset = uint32(off)
	s.FDEs = append(s.FDEs, f)
	return nil
}

// appendRecord appends f's (checked) attribute record and its n bytes of
// FREs to b.
func appendRecord(b []byte, order binary.ByteOrder, f *FDE, n int) []byte {
	p := len(b)
	b = slices.Grow(b, FDEAttrSize+n)[:p+FDEAttrSize+n]
	order.PutUint16(b[p:], uint16(len(f.FREs)))
	b[p+2], b[p+3], b[p+4] = f.Info, f.Info2, f.RepSize
	putFREs(b[p+FDEAttrSize:], order, f)
	return b
}
