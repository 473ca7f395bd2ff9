package emit

import (
	"encoding/binary"
	"fmt"
)

// NumFDEs returns the number of functions in s.
func (s *Section) NumFDEs() int { return len(s.Index) }

// NumFREs returns the number of FREs of s's functions, as the header
// counts them: an FRE block shared by several functions once for each.
func (s *Section) NumFREs() int { return s.FRECount }

// FDE returns function i of s (in index order) with its FREs, decoded
// from FREData with Decode's checks (FRE start addresses, data-word sizes
// and counts, the record within FREData). Dump, DumpJSON, ReaderFor and
// verify read a section through it. An error says the function does not
// exist or its record is malformed.
func (s *Section) FDE(i int) (FDE, error) {
	if i < 0 || i >= len(s.Index) {
		return FDE{}, fmt.Errorf("no FDE %d (%d FDEs)", i, len(s.Index))
	}
	d, err := s.recordDecoder()
	if err != nil {
		return FDE{}, err
	}
	return d.recordFDE(i)
}

// Functions returns every function of s with its FREs, in index order
// (FDE of each).
func (s *Section) Functions() ([]FDE, error) {
	if len(s.Index) == 0 {
		return nil, nil
	}
	d, err := s.recordDecoder()
	if err != nil {
		return nil, err
	}
	fdes := make([]FDE, len(s.Index))
	for i := range fdes {
		if fdes[i], err = d.recordFDE(i); err != nil {
			return nil, err
		}
	}
	return fdes, nil
}

// Func returns function i of s as an FDE without its FREs: its index
// entry's fields and its attribute record's Info, Info2 and RepSize.
func (s *Section) Func(i int) (FDE, error) {
	if i < 0 || i >= len(s.Index) {
		return FDE{}, fmt.Errorf("no FDE %d (%d FDEs)", i, len(s.Index))
	}
	e := s.Index[i]
	if uint64(e.FREOffset)+FDEAttrSize > uint64(len(s.FREData)) {
		return FDE{}, fmt.Errorf("FDE %d: FRE offset %#x past the FRE data (%#x bytes)", i, e.FREOffset, len(s.FREData))
	}
	r := s.FREData[e.FREOffset:]
	return FDE{StartOffset: e.StartOffset, Size: e.Size, Info: r[2], Info2: r[3], RepSize: r[4], FREOffset: e.FREOffset}, nil
}

// NumFREsOf returns the number of FREs of function i, from its attribute
// record (0 when there is no such function).
func (s *Section) NumFREsOf(i int) int {
	order := s.Header.ABI.ByteOrder()
	if i < 0 || i >= len(s.Index) || order == nil {
		return 0
	}
	off := uint64(s.Index[i].FREOffset)
	if off+FDEAttrSize > uint64(len(s.FREData)) {
		return 0
	}
	return int(order.Uint16(s.FREData[off:]))
}

// Shares reports whether two functions of s share one record of FRE
// data (ShareFREs, or Decode of a section that shares).
func (s *Section) Shares() bool {
	seen := make(map[uint32]bool, len(s.Index))
	for _, e := range s.Index {
		if seen[e.FREOffset] {
			return true
		}
		seen[e.FREOffset] = true
	}
	return false
}

// recordDecoder returns a decoder of s's FRE data.
func (s *Section) recordDecoder() (*decoder, error) {
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return nil, fmt.Errorf("unknown ABI %d", uint8(s.Header.ABI))
	}
	return &decoder{sec: s, data: s.FREData, order: order}, nil
}

// recordFDE decodes function i of d.sec: its index entry, its attribute
// record and its FREs, with Decode's checks.
func (d *decoder) recordFDE(i int) (FDE, error) {
	f, err := d.sec.Func(i)
	if err != nil {
		return FDE{}, err
	}
	attr := int(f.FREOffset)
	n := int(d.u16(attr))
	// Each FRE takes at least 2 bytes: the slab is bounded by the bytes
	// there are, freList refusing a count they cannot hold.
	d.freBudget = uint64(n)
	d.freSlab = make([]FRE, min(n, len(d.data)/2))
	if _, err := d.freList(&f, i, attr+2, attr+FDEAttrSize, len(d.data), n); err != nil {
		return FDE{}, fmt.Errorf("FRE data: %w", err)
	}
	return f, nil
}

// recordLen walks the attribute record at b[start:] and its FREs: its
// length in bytes, its number of FREs and the start of the last.
func recordLen(b []byte, start int, order binary.ByteOrder) (n, nFREs int, last uint32, err error) {
	if start < 0 || start > len(b)-FDEAttrSize {
		return 0, 0, 0, fmt.Errorf("no attribute record at %#x", start)
	}
	as := FDE{Info: b[start+2]}.FREType().AddrSize()
	if as == 0 {
		return 0, 0, 0, fmt.Errorf("invalid FRE type in the record at %#x", start)
	}
	nFREs = int(order.Uint16(b[start:]))
	p := start + FDEAttrSize
	for j := 0; j < nFREs; j++ {
		if p > len(b)-as-1 {
			return 0, 0, 0, fmt.Errorf("FRE %d runs past the FRE data", j)
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
		return 0, 0, 0, fmt.Errorf("FREs run past the FRE data")
	}
	return p - start, nFREs, last, nil
}
