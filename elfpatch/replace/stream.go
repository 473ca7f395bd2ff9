//go:build linux

package replace

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// A Stream is where a command writes a stream once, at its end (a report's
// lines, a section's bytes), opened before the work starts so that a
// target that cannot be written fails the run before any file is patched:
// "-" and /dev/stdout are standard output, /dev/stderr standard error,
// /dev/fd/N (a process substitution's pipe, a shell's redirection) the
// descriptor N inherited, written through its own file offset as the
// shell's other writers are. Any other path is resolved by the kernel once
// ([OutputPlace]: a final symbolic link followed only under
// fs.protected_symlinks), and then used only through what was opened: a
// FIFO of the user's own, the null device or the user's terminal is opened
// now (without waiting) and written as it is ([OpenSink]); a regular file,
// or nothing, is replaced atomically at the end in the directory held open
// now, a new file made with the mode given.
type Stream struct {
	perm   os.FileMode
	w      io.Writer // nil: replace at atomically
	at     Place     // the file replaced (w nil)
	opened io.Closer // the file opened for w, closed once written
}

// OpenStream resolves path and opens what it names when it is written as
// it is (see [Stream]); stdout and stderr are what "-", /dev/stdout and
// /dev/stderr write to, and a new file gets perm. An error of the
// directory that would hold the file (it cannot be opened, or is not
// writable) is an *fs.PathError naming that directory.
func OpenStream(path string, perm os.FileMode, stdout, stderr io.Writer) (*Stream, error) {
	s := &Stream{perm: perm}
	switch fd, ok := InheritedFD(path); {
	case path == "-" || ok && fd == 1:
		s.w = stdout
		return s, nil
	case ok && fd == 2:
		s.w = stderr
		return s, nil
	case ok:
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return nil, fmt.Errorf("descriptor %d: %w", fd, err)
		}
		s.w = fdWriter(fd)
		return s, nil
	}
	at, err := OutputPlace(path)
	if err != nil {
		return nil, err
	}
	f, err := OpenSink(at)
	if err != nil {
		at.Dir.Close()
		return nil, UnwrapPath(err)
	}
	if f != nil {
		at.Dir.Close()
		s.w, s.opened = f, f
		return s, nil
	}
	if err := at.Dir.Writable(); err != nil {
		at.Dir.Close()
		return nil, err
	}
	s.at = at
	return s, nil
}

// Terminal reports whether s writes to a terminal.
func (s *Stream) Terminal() bool {
	switch w := s.w.(type) {
	case *os.File:
		return IsTerminal(int(w.Fd()))
	case fdWriter:
		return IsTerminal(int(w))
	}
	return false
}

// IsTerminal reports whether the descriptor fd is a terminal (TCGETS
// succeeds on it).
func IsTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return fd >= 0 && err == nil
}

// fdWriter writes to an inherited descriptor, which it does not own (an
// *os.File would close it when collected).
type fdWriter int

func (fd fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(int(fd), p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// Finish writes the stream to its target with fill, once: to the writer
// or file opened, or to a new file that replaces the one at the path
// atomically (its temporary file tracked by t), and closes what was
// opened.
func (s *Stream) Finish(t *TempFiles, fill func(w io.Writer) error) error {
	if s.w == nil {
		defer s.Close()
		return t.Replace(s.at, nil, s.perm, ReplaceOptions{}, func(tmp *os.File) error { return fill(tmp) })
	}
	err := fill(s.w)
	if s.opened != nil {
		if cerr := s.opened.Close(); err == nil {
			err = cerr
		}
		s.opened = nil
	}
	return err
}

// Close closes the file or directory opened, when the stream was not
// written (Finish closes them otherwise).
func (s *Stream) Close() error {
	if s.opened != nil {
		s.opened.Close()
		s.opened = nil
	}
	if s.at.Dir != nil {
		s.at.Dir.Close()
		s.at.Dir = nil
	}
	return nil
}
