package cfi

import (
	"errors"
	"math"
	"testing"
)

// TestLEB128 checks both decoders on the edges of their range: one byte,
// several, the largest and smallest 64-bit values, the tenth byte that
// carries more than the 64th bit, truncation, and a start past the end.
func TestLEB128(t *testing.T) {
	unsigned := []struct {
		in   []byte
		pos  int
		want uint64
		next int
		err  error
	}{
		{[]byte{0x00}, 0, 0, 1, nil},
		{[]byte{0x7f}, 0, 127, 1, nil},
		{[]byte{0xe5, 0x8e, 0x26}, 0, 624485, 3, nil},
		{[]byte{0xff, 0x80, 0x80, 0x00}, 0, 127, 4, nil}, // padded
		{[]byte{9, 0x80, 0x01}, 1, 128, 3, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, math.MaxUint64, 10, nil},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, 0, 0, 10, errLEBOverflow},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00}, 0, 0, 10, errLEBOverflow},
		{[]byte{0x80, 0x80}, 0, 0, 2, errTruncated},
		{[]byte{}, 0, 0, 0, errTruncated},
		{[]byte{1}, 1, 0, 1, errTruncated},
	}
	for _, c := range unsigned {
		v, next, err := ULEB128(c.in, c.pos)
		if v != c.want || next != c.next || !errors.Is(err, c.err) {
			t.Errorf("ULEB128(% x, %d) = %d, %d, %v; want %d, %d, %v", c.in, c.pos, v, next, err, c.want, c.next, c.err)
		}
	}
	signed := []struct {
		in   []byte
		want int64
		next int
		err  error
	}{
		{[]byte{0x00}, 0, 1, nil},
		{[]byte{0x3f}, 63, 1, nil},
		{[]byte{0x40}, -64, 1, nil},
		{[]byte{0x7f}, -1, 1, nil},
		{[]byte{0x80, 0x7f}, -128, 2, nil},
		{[]byte{0xc0, 0xbb, 0x78}, -123456, 3, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, math.MaxInt64, 10, nil},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, math.MinInt64, 10, nil},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40}, -1 << 62, 9, nil},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 0, 10, errLEBOverflow},
		{[]byte{0xff}, 0, 1, errTruncated},
	}
	for _, c := range signed {
		v, next, err := SLEB128(c.in, 0)
		if v != c.want || next != c.next || !errors.Is(err, c.err) {
			t.Errorf("SLEB128(% x) = %d, %d, %v; want %d, %d, %v", c.in, v, next, err, c.want, c.next, c.err)
		}
	}
}
