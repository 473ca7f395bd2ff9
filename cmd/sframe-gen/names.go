package main

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// displayName returns a file, member or symbol name as messages print it:
// as it is when it is valid UTF-8 of printable characters, else quoted as
// a Go string (strconv.Quote), so that a name holding control characters
// or terminal escape sequences cannot act on the terminal or forge a line.
func displayName(s string) string {
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
