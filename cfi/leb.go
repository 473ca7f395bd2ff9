package cfi

import "errors"

var (
	errTruncated   = errors.New("operand runs past the end")
	errLEBOverflow = errors.New("LEB128 value does not fit in 64 bits")
)

// ULEB128 decodes the unsigned LEB128 number at data[pos:]. It returns the
// value and the position after it, or an error for a truncated encoding or
// one whose value does not fit in 64 bits (the tenth byte may only carry
// the 64th bit). With SLEB128 it is the project's one LEB128 decoder: the
// call-frame instructions, the CIE fields, the pointer encodings and
// emit/verify's DWARF expressions all read theirs with it. It is small
// enough to be inlined into a caller's loop, the one-byte form, most
// operands, first.
func ULEB128(data []byte, pos int) (v uint64, next int, err error) {
	if pos < len(data) && data[pos] < 0x80 {
		return uint64(data[pos]), pos + 1, nil
	}
	for shift := uint(0); pos < len(data); shift += 7 {
		b := data[pos]
		pos++
		if shift == 63 && b > 1 {
			return 0, pos, errLEBOverflow
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, pos, nil
		}
	}
	return 0, pos, errTruncated
}

// SLEB128 decodes the signed LEB128 number at data[pos:], as ULEB128 does
// the unsigned one (the tenth byte may only carry the sign: 0x00 or 0x7f).
// It too can be inlined.
func SLEB128(data []byte, pos int) (int64, int, error) {
	var v uint64
	for shift := uint(0); pos < len(data); shift += 7 {
		b := data[pos]
		pos++
		if shift == 63 && b != 0 && b != 0x7f {
			return 0, pos, errLEBOverflow
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			if b&0x40 != 0 {
				v |= ^uint64(0) << shift << 7 // sign-extend (nothing left after the 64th bit)
			}
			return int64(v), pos, nil
		}
	}
	return 0, pos, errTruncated
}
