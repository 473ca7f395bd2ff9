package sparse

import (
	"fmt"
	"io"
	"os"
)

// Copy copies in's first n bytes to out at the same offsets and makes out
// at least n bytes long. The holes of a sparse input are not written, so
// the output stays sparse: a 20 KB file claiming 1 TB must not make us
// write 1 TB. Where the system or file system cannot tell holes apart,
// everything is copied. Data ranges go file to file (copy_file_range where
// the kernel has it). The file offsets of in and out are left anywhere.
func Copy(out, in *os.File, n int64) error {
	err := dataRanges(in, n, func(off, end int64, data bool) error {
		if data {
			return copyRange(out, in, off, end-off)
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

// CopyOver writes in's first n bytes over out at the same offsets: the
// data ranges copied, the holes of in punched in out (or written as zeros
// where the file system cannot punch). out keeps its size.
func CopyOver(out, in *os.File, n int64) error {
	return dataRanges(in, n, func(off, end int64, data bool) error {
		if data {
			return copyRange(out, in, off, end-off)
		}
		return zeroRange(out, off, end-off)
	})
}

// copyRange copies in's bytes [off, off+n) to the same offsets of out.
func copyRange(out, in *os.File, off, n int64) error {
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

// zeroRange makes out's bytes [off, off+n) zeros: a hole punched, or
// zeros written.
func zeroRange(out *os.File, off, n int64) error {
	if n <= 0 || punchHole(out, off, n) {
		return nil
	}
	zeros := make([]byte, min(n, 1<<20))
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if _, err := out.WriteAt(zeros[:k], off); err != nil {
			return err
		}
		off, n = off+k, n-k
	}
	return nil
}
