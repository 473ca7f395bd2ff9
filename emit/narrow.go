package emit

import "fmt"

// NarrowestFREType is the narrowest FRE type whose start addresses hold
// last, the start of a function's last FRE (its FREs start in increasing
// order): ADDR1 below 0x100, ADDR2 below 0x10000, else ADDR4. Where
// FRETypeFor goes by the function's size (as gas and ld choose), this goes
// by what the FREs need: a function of 300 bytes whose last FRE starts at
// 0x20 takes one byte per start address instead of two.
func NarrowestFREType(last uint32) FREType { return FRETypeFor(last) }

// NarrowLast rewrites the FREs of FDE i, whose attribute record must be the
// last one of s.FREData (the function appended last), with their start
// addresses in the narrowest FRE type that holds them (NarrowestFREType):
// the FRE type is the width of the start addresses, not a claim about the
// function's size, and every reader (libsframe, the Linux kernel) reads
// the starts in the width the record's info byte says. The FREs mean
// what they meant; the record gets shorter by a byte or three per FRE. It
// does nothing when the type is the narrowest already, or to a record
// that is not the last (shared, or followed by another).
func (s *Section) NarrowLast(i int) error {
	if i < 0 || i >= len(s.Index) {
		return fmt.Errorf("narrow: no FDE %d", i)
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return fmt.Errorf("narrow: unknown ABI %d", uint8(s.Header.ABI))
	}
	b := s.FREData
	start := int(s.Index[i].FREOffset)
	if start > len(b)-FDEAttrSize {
		return fmt.Errorf("narrow: FDE %d: no attribute record at %#x", i, start)
	}
	ft := FDE{Info: b[start+2]}.FREType()
	if ft == FREAddr1 {
		return nil // the common case: nothing to read
	}
	n, nFREs, last, err := recordLen(b, start, order)
	if err != nil {
		return fmt.Errorf("narrow: FDE %d: %w", i, err)
	}
	if start+n != len(b) {
		return nil
	}
	nt := NarrowestFREType(last)
	if nt >= ft {
		return nil
	}
	as, nas := ft.AddrSize(), nt.AddrSize()
	// Forward, in place: each FRE is written no later than it is read.
	r, w := start+FDEAttrSize, start+FDEAttrSize
	for range nFREs {
		var addr uint32
		switch as {
		case 2:
			addr = uint32(order.Uint16(b[r:]))
		default:
			addr = order.Uint32(b[r:])
		}
		switch nas {
		case 1:
			b[w] = uint8(addr)
		default:
			order.PutUint16(b[w:], uint16(addr))
		}
		r += as
		w += nas
		e := FRE{Info: b[r]}
		m := 1 + e.DataWordCount()*e.DataWordSize().Bytes()
		copy(b[w:w+m], b[r:r+m])
		r += m
		w += m
	}
	b[start+2] = b[start+2]&^0xf | uint8(nt)
	s.FREData = b[:w]
	return nil
}
