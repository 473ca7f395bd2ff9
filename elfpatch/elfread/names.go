package elfread

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// DisplayName returns a file, member or symbol name as messages print it:
// as it is when it is valid UTF-8 of printable characters, else quoted as
// a Go string (strconv.Quote), so that a name holding control characters
// or terminal escape sequences cannot act on the terminal or forge a line.
func DisplayName(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// JSONWriter is the writer of a json.Encoder whose output may hold names
// from the files (file, member and symbol names): it escapes the C1
// control characters (U+0080 to U+009F) that encoding/json leaves raw as
// \u escapes, since U+009B is a CSI to some terminals and JSON may well
// be printed on one. They can only occur inside JSON strings, where the
// escape means the same; an Encoder writes each value in one Write, so no
// character is split between two.
type JSONWriter struct{ W io.Writer }

// Write writes p to W, its C1 control characters escaped.
func (j JSONWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte{0xc2}) { // the first byte of every C1 character
		return j.W.Write(p)
	}
	var out []byte
	for b := p; len(b) > 0; {
		r, n := utf8.DecodeRune(b)
		if r >= 0x80 && r < 0xa0 {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	if _, err := j.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
