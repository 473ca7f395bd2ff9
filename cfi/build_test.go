package cfi

import "encoding/binary"

// Helpers to write CFI sections by hand for the unit tests.

func ulebBytes(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func slebBytes(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// secBuilder appends CIEs and FDEs to a section.
type secBuilder struct {
	order binary.ByteOrder
	eh    bool
	b     []byte
}

func (s *secBuilder) u16(v uint16) []byte {
	return s.order.(binary.AppendByteOrder).AppendUint16(nil, v)
}
func (s *secBuilder) u32(v uint32) []byte {
	return s.order.(binary.AppendByteOrder).AppendUint32(nil, v)
}
func (s *secBuilder) u64(v uint64) []byte {
	return s.order.(binary.AppendByteOrder).AppendUint64(nil, v)
}

// entry appends an entry with the given id field and body; 64 selects
// the 64-bit DWARF format. It returns the entry's offset.
func (s *secBuilder) entry(format64 bool, id uint64, body []byte) int {
	off := len(s.b)
	idSize := 4
	if format64 && !s.eh {
		idSize = 8
	}
	n := idSize + len(body)
	if format64 {
		s.b = append(s.b, s.u32(0xffffffff)...)
		s.b = append(s.b, s.u64(uint64(n))...)
	} else {
		s.b = append(s.b, s.u32(uint32(n))...)
	}
	if idSize == 8 {
		s.b = append(s.b, s.u64(id)...)
	} else {
		s.b = append(s.b, s.u32(uint32(id))...)
	}
	s.b = append(s.b, body...)
	return off
}

// cie appends a CIE. body starts after the CIE id.
func (s *secBuilder) cie(format64 bool, body []byte) int {
	id := uint64(0)
	if !s.eh {
		id = 0xffffffff
		if format64 {
			id = 0xffffffffffffffff
		}
	}
	return s.entry(format64, id, body)
}

// fde appends an FDE of the CIE at cieOff; body starts after the CIE
// pointer.
func (s *secBuilder) fde(format64 bool, cieOff int, body []byte) int {
	id := uint64(cieOff)
	if s.eh {
		hdr := 4
		if format64 {
			hdr = 12
		}
		id = uint64(len(s.b) + hdr - cieOff)
	}
	return s.entry(format64, id, body)
}

// simpleCIE is a version 1 "zR" CIE (eh) or a version 1 "" CIE (debug):
// code alignment ca, data alignment da, RA column ra, FDE encoding enc.
func (s *secBuilder) simpleCIE(ca uint64, da int64, ra byte, enc PointerEncoding, initial []byte) int {
	body := cat([]byte{1})
	if s.eh {
		body = cat(body, []byte("zR\x00"), ulebBytes(ca), slebBytes(da), []byte{ra}, ulebBytes(1), []byte{byte(enc)}, initial)
	} else {
		body = cat(body, []byte{0}, ulebBytes(ca), slebBytes(da), []byte{ra}, initial)
	}
	return s.cie(false, body)
}

// simpleFDE is an FDE with udata8 (eh: the CIE's encoding must be
// udata8/absptr) start and size and no augmentation data beyond "z".
func (s *secBuilder) simpleFDE(cieOff int, start, size uint64, instrs []byte) int {
	body := cat(s.u64(start), s.u64(size))
	if s.eh {
		body = cat(body, []byte{0})
	}
	return s.fde(false, cieOff, cat(body, instrs))
}
