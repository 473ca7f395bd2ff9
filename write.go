package sframegen

import (
	"bytes"
	"errors"
	"io/fs"
	"os"

	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
	"github.com/sframe-gen/sframe-gen/elfpatch/sparse"
)

// writer writes one job's result: over the file (with its other links in
// the tree) or to the job's Out.
type writer struct {
	g    *Generator
	j    Job
	src  *replace.Source
	size int64
	data []byte // the file's bytes, when it was read whole
}

// replace writes the file's new contents through a temporary file (see
// replace.TempFiles.Replace): over the file and its links, or to Out, then Out's
// other names. An error of write about the input (its layout) is returned
// as it is; one about the output names Out.
func (w *writer) replace(write func(tmp *os.File) error) error {
	var inputErr error
	check := func(tmp *os.File) error {
		err := write(tmp)
		var pe *fs.PathError
		if err != nil && !(errors.As(err, &pe) && pe.Path == tmp.Name()) {
			inputErr = err
		}
		return err
	}
	perm := w.src.Mode().Perm()
	if w.j.Out.Dir == nil {
		return w.g.res.Temps.Replace(w.src.Place, w.src, perm, w.j.Replace, check)
	}
	ro := w.j.Replace
	ro.Links, ro.InPlace = nil, false
	err := w.g.res.Temps.Replace(w.j.Out, w.src, perm, ro, check)
	if err != nil && err != inputErr {
		return &OutputError{Op: "writing", Link: -1, Err: replace.UnwrapPath(err)}
	}
	if err != nil {
		return err
	}
	for i, l := range w.j.OutLinks {
		if err := replace.Link(w.j.Out, l); err != nil {
			return &OutputError{Op: "linking", Link: i, Err: replace.UnwrapPath(err)}
		}
	}
	return nil
}

// OutputError is an error writing the job's output (Job.Out), not about
// the input.
type OutputError struct {
	Op   string // "writing", "linking"
	Link int    // the index in Job.OutLinks of the name linked; -1 for Out
	Err  error
}

// Error says what failed.
func (e *OutputError) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap returns the error.
func (e *OutputError) Unwrap() error { return e.Err }

// writeBytes returns the writer of a result built in memory: a sparse
// input's blocks of zeros stay holes.
func (w *writer) writeBytes(data []byte) func(tmp *os.File) error {
	if w.src.Sparse() {
		return func(tmp *os.File) error { return writeKeepingHoles(tmp, data) }
	}
	return func(tmp *os.File) error { _, err := tmp.Write(data); return err }
}

// unchanged copies the file as it is to Out (in place, nothing is
// written).
func (w *writer) unchanged() error {
	if w.j.Out.Dir == nil {
		return nil
	}
	return w.replace(func(tmp *os.File) error { return sparse.Copy(tmp, w.src.File, w.size) })
}

// holeBlock is the unit writeKeepingHoles leaves unwritten when it is all
// zeros.
const holeBlock = 64 << 10

// writeKeepingHoles writes data to the start of the empty file tmp,
// leaving every holeBlock-aligned block of zeros unwritten (a hole), so
// that a sparse input patched in memory gives a sparse output.
func writeKeepingHoles(tmp *os.File, data []byte) error {
	if st, err := tmp.Stat(); err != nil || st.Size() != 0 {
		_, err := tmp.Write(data) // not empty: every byte written
		return err
	}
	var zeros [holeBlock]byte
	start := -1 // of the data run being collected
	flush := func(end int) error {
		if start < 0 {
			return nil
		}
		_, err := tmp.WriteAt(data[start:end], int64(start))
		start = -1
		return err
	}
	for off := 0; off < len(data); off += holeBlock {
		end := min(off+holeBlock, len(data))
		if bytes.Equal(data[off:end], zeros[:end-off]) {
			if err := flush(off); err != nil {
				return err
			}
		} else if start < 0 {
			start = off
		}
	}
	if err := flush(len(data)); err != nil {
		return err
	}
	return tmp.Truncate(int64(len(data)))
}
