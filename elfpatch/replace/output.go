//go:build linux

package replace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// OutputPlace is [NamedPlace] for a file sframe-gen is to write (replace or
// create): when the name already holds a file, it is also opened as
// open(2) with O_CREAT opens it (nothing read, nothing truncated), so the
// kernel's fs.protected_regular and fs.protected_fifos apply as they do to
// cp or a shell's redirection: a root run does not write a file or FIFO
// another user owns in a sticky world-writable directory (EACCES).
func OutputPlace(path string) (Place, error) {
	p, err := NamedPlace(path)
	if err != nil {
		return p, err
	}
	if err := p.createCheck(); err != nil {
		p.Dir.Close()
		return Place{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return p, nil
}

// createCheck opens the file at p, if there is one, with O_CREAT (and
// O_NOFOLLOW, O_NONBLOCK: a link is not followed, a FIFO not waited for),
// for the kernel's checks of a creating open. Should the file vanish
// meanwhile, the empty file that open made is removed.
func (p Place) createCheck() error {
	before, err := p.stat()
	if err != nil || before.Mode&unix.S_IFMT != unix.S_IFREG && before.Mode&unix.S_IFMT != unix.S_IFIFO {
		// Nothing there, or a link a rename replaces; a directory,
		// device or socket is refused later, and never opened (the
		// open of a device can act: a tape rewinds, a watchdog starts).
		return nil
	}
	fd, err := unix.Openat(p.Dir.fd, p.Name, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil // swapped for a link meanwhile: never followed
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil && (st.Dev != before.Dev || st.Ino != before.Ino) &&
		st.Size == 0 && int(st.Uid) == os.Geteuid() && st.Nlink == 1 {
		if now, err := p.stat(); err == nil && now.Ino == st.Ino && now.Dev == st.Dev {
			unix.Unlinkat(p.Dir.fd, p.Name, 0)
		}
	}
	return nil
}

// OpenSink opens the file at p when it is written as it is rather than
// replaced: a FIFO the user running sframe-gen owns, the null device, or
// that user's own terminal (/dev/tty, or a terminal device the user owns). It returns nil, nil when p holds a regular file
// or nothing (to be replaced or created), and an error naming what p holds
// for anything else (a FIFO or terminal of another user, another device, a
// socket, a directory): a root run never waits on, nor writes to, a FIFO or
// device someone else planted. The file is opened without following a
// symbolic link, without waiting, and checked to be what was decided on.
// A FIFO of the user's own without a reader yet is held (O_PATH) and opened
// for writing through that descriptor at the first write, which waits for
// its reader as a shell's redirection would: the run itself never waits
// for it before its end.
func OpenSink(p Place) (io.WriteCloser, error) {
	st, err := p.stat()
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if err := sinkAllowed(&st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFREG {
		return nil, err
	}
	fd, err := unix.Openat(p.Dir.fd, p.Name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENXIO) && st.Mode&unix.S_IFMT == unix.S_IFIFO {
		// No reader yet: hold the FIFO itself.
		fd, err = unix.Openat(p.Dir.fd, p.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			var now unix.Stat_t
			if err := unix.Fstat(fd, &now); err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
				unix.Close(fd)
				return nil, ErrChanged
			}
			return &heldFIFO{held: fd, path: p.Path()}, nil
		}
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, ErrChanged
	case err != nil:
		return nil, err
	}
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		unix.Close(fd)
		return nil, ErrChanged
	}
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	return os.NewFile(uintptr(fd), p.Path()), nil
}

// sinkAllowed says whether a destination of the kind st describes may be
// written (see OpenSink).
func sinkAllowed(st *unix.Stat_t) error {
	mine := int(st.Uid) == os.Geteuid()
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFIFO:
		if mine {
			return nil
		}
		return fmt.Errorf("a FIFO of user %d, not of the user running sframe-gen (not written)", st.Uid)
	case unix.S_IFDIR:
		return errors.New("is a directory")
	case unix.S_IFCHR:
		switch maj, min := unix.Major(st.Rdev), unix.Minor(st.Rdev); {
		case maj == 1 && min == 3: // /dev/null
			return nil
		case maj == 5 && min == 0: // /dev/tty: the caller's own terminal
			return nil
		}
		// A terminal: Unix 98 ptys (136-143) and virtual consoles (4),
		// the user's own.
		if maj := unix.Major(st.Rdev); mine && (maj == 4 || maj >= 136 && maj <= 143) {
			return nil
		}
	}
	return &NotRegularError{Kind: fileKind(st.Mode)}
}

// heldFIFO is a FIFO of the user's own held open (O_PATH) until its first
// write opens it for writing, through the descriptor held.
type heldFIFO struct {
	held int
	path string
	f    *os.File
}

func (h *heldFIFO) Write(b []byte) (int, error) {
	if h.f == nil {
		fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", h.held), unix.O_WRONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, &fs.PathError{Op: "open", Path: h.path, Err: err}
		}
		h.f = os.NewFile(uintptr(fd), h.path)
	}
	return h.f.Write(b)
}

func (h *heldFIFO) Close() error {
	unix.Close(h.held)
	if h.f != nil {
		return h.f.Close()
	}
	return nil
}
