package cfi

import "errors"

var (
	errTruncated   = errors.New("operand runs past the end")
	errLEBOverflow = errors.New("LEB128 value does not fit in 64 bits")
)

// uleb decodes an unsigned LEB128 number at data[pos:]. It returns the value
// and the position after it, or an error for a truncated or over-long
// encoding.
func uleb(data []byte, pos int) (uint64, int, error) {
	if pos < len(data) && data[pos] < 0x80 {
		return uint64(data[pos]), pos + 1, nil
	}
	return ulebSlow(data, pos)
}

func ulebSlow(data []byte, pos int) (uint64, int, error) {
	var v uint64
	var shift uint
	for {
		if pos >= len(data) {
			return 0, pos, errTruncated
		}
		b := data[pos]
		pos++
		if shift == 63 && b > 1 || shift > 63 {
			return 0, pos, errLEBOverflow
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, pos, nil
		}
		shift += 7
	}
}

// sleb decodes a signed LEB128 number at data[pos:].
func sleb(data []byte, pos int) (int64, int, error) {
	if pos < len(data) && data[pos] < 0x80 {
		return int64(int8(data[pos]<<1)) >> 1, pos + 1, nil
	}
	return slebSlow(data, pos)
}

func slebSlow(data []byte, pos int) (int64, int, error) {
	var v int64
	var shift uint
	for {
		if pos >= len(data) {
			return 0, pos, errTruncated
		}
		b := data[pos]
		pos++
		if shift == 63 {
			// Only the sign may remain: 0x00 or 0x7f.
			if b != 0 && b != 0x7f {
				return 0, pos, errLEBOverflow
			}
			v |= int64(b) << 63
			return v, pos, nil
		}
		v |= int64(b&0x7f) << shift
		shift += 7
		if b < 0x80 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v, pos, nil
		}
	}
}
