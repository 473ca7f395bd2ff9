package elfread

import "io/fs"

// FileKind names what a file that is not regular is, for messages: "a
// directory", "a FIFO", "a socket", "a character device", "a block
// device", else the mode's type.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return m.Type().String()
}
