package sparse

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dataRanges calls fn for the ranges [off, end) of in's first n bytes in
// order: its data (data true) and the holes between (data false), as
// SEEK_DATA and SEEK_HOLE find them. Where the file system cannot tell
// holes apart, everything is one data range.
func dataRanges(in *os.File, n int64, fn func(off, end int64, data bool) error) error {
	for off := int64(0); off < n; {
		data, err := in.Seek(off, unix.SEEK_DATA)
		if errors.Is(err, syscall.ENXIO) || err == nil && data >= n {
			return fn(off, n, false) // only a hole after off
		}
		if err != nil { // no SEEK_DATA
			return fn(off, n, true)
		}
		if err := fn(off, data, false); err != nil {
			return err
		}
		hole, err := in.Seek(data, unix.SEEK_HOLE)
		if err != nil || hole > n {
			hole = n
		}
		if err := fn(data, hole, true); err != nil {
			return err
		}
		off = hole
	}
	return nil
}

// punchHole makes out's bytes [off, off+n) a hole, keeping its size; it
// reports whether it could.
func punchHole(out *os.File, off, n int64) bool {
	return unix.Fallocate(int(out.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n) == nil
}

// MayHaveHoles reports whether the file fi describes may have holes: it
// has fewer blocks than its size needs.
func MayHaveHoles(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Blocks*512 < fi.Size()
}
