package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// streamTarget is where the command writes a stream once, at its end
// (--report's lines, --raw's section), opened before the work starts so
// that a target that cannot be written fails the run before any file is
// patched: "-" and /dev/stdout are standard output, /dev/stderr standard
// error, /dev/fd/N (a process substitution's pipe, a shell's redirection)
// the descriptor N inherited, written through its own file offset as the
// shell's other writers are. Any other path is resolved by the kernel once
// (replace.OutputPlace: a final symbolic link followed only under
// fs.protected_symlinks), and then used only through what was opened: a
// FIFO of the user's own, the null device or the user's terminal is opened
// now (without waiting) and written as it is (replace.OpenSink); a
// regular file, or nothing, is replaced atomically at the end in the
// directory held open now, a new file made with mode perm.
type streamTarget struct {
	path   string
	perm   os.FileMode
	w      io.Writer     // nil: replace at atomically
	at     replace.Place // the file replaced (w nil)
	opened io.Closer     // the file opened for w, closed once written
}

// openStream resolves path and opens what it names when it is written as
// it is (see streamTarget); a new file gets perm.
func openStream(c *cli, path string, perm os.FileMode) (*streamTarget, error) {
	t := &streamTarget{path: path, perm: perm}
	switch fd, ok := inheritedFD(path); {
	case path == "-" || ok && fd == 1:
		t.w = c.stdout
		return t, nil
	case ok && fd == 2:
		t.w = c.stderr
		return t, nil
	case ok:
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return nil, fmt.Errorf("descriptor %d: %w", fd, err)
		}
		t.w = fdWriter(fd)
		return t, nil
	}
	at, err := replace.OutputPlace(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path != path {
		return nil, fmt.Errorf("cannot write in %s: %w", displayName(pe.Path), pe.Err)
	}
	if err != nil {
		return nil, unwrapPath(err)
	}
	f, err := replace.OpenSink(at)
	if err != nil {
		at.Dir.Close()
		return nil, unwrapPath(err)
	}
	if f != nil {
		at.Dir.Close()
		t.w, t.opened = f, f
		return t, nil
	}
	if err := at.Dir.Writable(); err != nil {
		at.Dir.Close()
		return nil, fmt.Errorf("cannot write in %s: %w", displayName(at.Dir.Path()), unwrapPath(err))
	}
	t.at = at
	return t, nil
}

// terminal reports whether t writes to a terminal.
func (t *streamTarget) terminal() bool {
	switch w := t.w.(type) {
	case *os.File:
		return isTerminal(w)
	case fdWriter:
		return isTerminalFD(int(w))
	}
	return false
}

// inheritedFD returns the descriptor that path names for this process
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), if it names one.
func inheritedFD(path string) (int, bool) {
	switch path {
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if n, ok := strings.CutPrefix(path, dir); ok {
			fd, err := strconv.Atoi(n)
			return fd, err == nil && n != "" && strings.Trim(n, "0123456789") == ""
		}
	}
	return 0, false
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

// write writes the stream to its target with fill: to standard output,
// the file opened, or path replaced atomically.
func (t *streamTarget) write(c *cli, fill func(w io.Writer) error) error {
	if t.w == nil {
		defer t.close()
		return c.temps.Replace(t.at, nil, t.perm, replace.ReplaceOptions{}, func(tmp *os.File) error { return fill(tmp) })
	}
	err := fill(t.w)
	if t.opened != nil {
		if cerr := t.opened.Close(); err == nil {
			err = cerr
		}
		t.opened = nil
	}
	return err
}

// close closes the file or directory opened, when the stream was not
// written.
func (t *streamTarget) close() {
	if t.opened != nil {
		t.opened.Close()
		t.opened = nil
	}
	if t.at.Dir != nil {
		t.at.Dir.Close()
		t.at.Dir = nil
	}
}
