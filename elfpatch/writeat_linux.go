//go:build linux

package elfpatch

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// writeAllAt writes pieces one after the other into f from offset off,
// as few system calls as it can (pwritev).
func writeAllAt(f *os.File, pieces [][]byte, off int64) error {
	fd := int(f.Fd())
	for len(pieces) > 0 {
		batch := pieces[:min(len(pieces), maxIovecs)]
		n, err := unix.Pwritev(fd, batch, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "pwritev", Path: f.Name(), Err: err}
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += int64(n)
		// Drop what was written, a piece cut where the write stopped.
		for n > 0 && len(pieces) > 0 {
			if n < len(pieces[0]) {
				pieces[0] = pieces[0][n:]
				break
			}
			n -= len(pieces[0])
			pieces = pieces[1:]
		}
		for len(pieces) > 0 && len(pieces[0]) == 0 {
			pieces = pieces[1:]
		}
	}
	return nil
}

// maxIovecs is the most slices one pwritev takes (Linux's UIO_MAXIOV).
const maxIovecs = 1024
