package emit

import "fmt"

// FormatError is a malformed section: what is wrong and the byte offset in
// the section where it was found.
type FormatError struct {
	Off int64  // byte offset from the start of the section
	Msg string // what is wrong
}

// Error formats the error as "offset 0x..: what is wrong".
func (e *FormatError) Error() string {
	return fmt.Sprintf("offset %#x: %s", e.Off, e.Msg)
}

func formatErr(off int, format string, args ...any) error {
	return &FormatError{Off: int64(off), Msg: fmt.Sprintf(format, args...)}
}
