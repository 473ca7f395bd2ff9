package sparse

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// CopySparse copies in's first n bytes to out at the same offsets and
// makes out at least n bytes long. The holes of a sparse input (found with
// SEEK_DATA/SEEK_HOLE) are not written, so the output stays sparse: a 20 KB
// file claiming 1 TB must not make us write 1 TB. Where the file system
// cannot tell holes apart, everything is copied. Data ranges go file to
// file (copy_file_range where the kernel has it). The file offsets of in
// and out are left anywhere.
func CopySparse(out, in *os.File, n int64) error {
	err := DataRanges(in, n, func(off, end int64, data bool) error {
		if data {
			return CopyRange(out, in, off, end-off)
		}
		return nil
	})
	if err != nil {
		return err
	}
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if st.Size() < n {
		return fmt.Errorf("copying input: it has %d bytes, want %d", st.Size(), n)
	}
	ost, err := out.Stat()
	if err != nil {
		return err
	}
	if ost.Size() < n {
		return out.Truncate(n) // a trailing hole
	}
	return nil
}

// DataRanges calls fn for the ranges [off, end) of in's first n bytes in
// order: its data (data true) and the holes between (data false), as
// SEEK_DATA and SEEK_HOLE find them. Where the file system cannot tell
// holes apart, everything is one data range.
func DataRanges(in *os.File, n int64, fn func(off, end int64, data bool) error) error {
	const seekData, seekHole = 3, 4 // Linux, FreeBSD, Solaris
	for off := int64(0); off < n; {
		data, err := in.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) || err == nil && data >= n {
			return fn(off, n, false) // only a hole after off
		}
		if err != nil { // no SEEK_DATA
			return fn(off, n, true)
		}
		if err := fn(off, data, false); err != nil {
			return err
		}
		hole, err := in.Seek(data, seekHole)
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

// CopyRange copies in's bytes [off, off+n) to the same offsets of out.
func CopyRange(out, in *os.File, off, n int64) error {
	if _, err := in.Seek(off, io.SeekStart); err != nil {
		return err
	}
	if _, err := out.Seek(off, io.SeekStart); err != nil {
		return err
	}
	m, err := io.Copy(out, io.LimitReader(in, n))
	if err != nil {
		return fmt.Errorf("copying input: %w", err)
	}
	if m != n {
		return fmt.Errorf("copying input: got %d bytes, want %d", m, n)
	}
	return nil
}
