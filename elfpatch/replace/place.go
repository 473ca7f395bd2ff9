package replace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A Dir is a directory held open, so that files in it are opened, created,
// linked and renamed relative to it (openat, renameat): a directory or
// symbolic link swapped in by another process while sframe-gen runs cannot
// redirect a read or a write elsewhere. The zero value is not usable; make
// one with [OpenDir] or [Dir.Beneath].
type Dir struct {
	fd   int
	path string // for messages
}

// OpenDir opens the directory path as it is named (symbolic links in it
// are followed: the user named them).
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

// Close closes the directory.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// Path is the directory's path, for messages.
func (d *Dir) Path() string { return d.path }

// join is the path of name in d, for messages.
func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// ErrSymlinkInPath is the error of [Dir.Beneath] and [Dir.Place] when a
// component of the path is a symbolic link or leaves the directory.
var ErrSymlinkInPath = errors.New("a symbolic link or \"..\" in its path (not followed)")

// Beneath opens the directory rel (slash-separated, relative) below d
// without following any symbolic link and without leaving d: with
// openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) where the kernel has it,
// else one component at a time with O_NOFOLLOW. "" and "." give d again
// (a new descriptor).
func (d *Dir) Beneath(rel string) (*Dir, error) {
	fd, err := openBeneath(d.fd, rel, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(rel), Err: err}
	}
	return &Dir{fd: fd, path: d.join(rel)}, nil
}

// openBeneath opens rel below the directory dirfd with flags (O_NOFOLLOW and
// O_CLOEXEC added), following no symbolic link.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	if rel == "" {
		rel = "."
	}
	if filepath.IsAbs(rel) {
		return -1, ErrSymlinkInPath
	}
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(dirfd, rel, &how)
	switch {
	case err == nil:
		return fd, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return -1, ErrSymlinkInPath
	case !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM):
		return -1, err
	}
	// No openat2 (Linux before 5.6, or a seccomp filter): one component
	// at a time, each with O_NOFOLLOW.
	parts := strings.Split(filepath.Clean(rel), string(filepath.Separator))
	cur, err := unix.Openat(dirfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for i, p := range parts {
		if p == ".." {
			unix.Close(cur)
			return -1, ErrSymlinkInPath
		}
		f := unix.O_PATH | unix.O_DIRECTORY
		if i == len(parts)-1 {
			f = flags
		}
		next, err := unix.Openat(cur, p, f|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		if errors.Is(err, unix.ELOOP) || (errors.Is(err, unix.ENOTDIR) && isSymlinkAt(cur, p)) {
			return -1, ErrSymlinkInPath
		}
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}

// isSymlinkAt reports whether name in dirfd is a symbolic link.
func isSymlinkAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// A Place is where a file is, or will be: an open directory and one name
// in it. Every read and write of sframe-gen goes through a Place, never
// through a path resolved again.
type Place struct {
	Dir  *Dir
	Name string // a single path component
}

// Path is the place's path, for messages.
func (p Place) Path() string { return p.Dir.join(p.Name) }

// Place is the place of rel (slash-separated, relative) below d: its
// directory is opened with [Dir.Beneath]. Close the place's Dir when done.
func (d *Dir) Place(rel string) (Place, error) {
	dir, name := filepath.Split(filepath.Clean(rel))
	if name == "" || name == "." || name == ".." {
		return Place{}, fmt.Errorf("%s: not a file name", d.join(rel))
	}
	sub, err := d.Beneath(dir)
	if err != nil {
		return Place{}, err
	}
	return Place{Dir: sub, Name: name}, nil
}

// ErrDanglingLink is the error of [NamedPlace] for a name that is a
// symbolic link to nothing: nothing is created through a link (as cp).
var ErrDanglingLink = errors.New("a symbolic link to nothing (not written through)")

// NamedPlace is the place of the file path names, as the user named it.
// The kernel resolves the name, once: its directories are opened as named
// (OpenDir), and a final symbolic link is followed by open(2) itself, under
// the kernel's protections (fs.protected_symlinks: a link in a sticky
// world-writable directory is followed only when the follower or the
// directory's owner owns it), never by reading the link and opening its
// text. The place returned is where the file the kernel opened is: its
// directory and name, found from the descriptor (/proc/self/fd) and
// checked to name that very file (device and inode), so a link is kept
// and its target replaced, as cp writes through it. A final link to
// nothing is [ErrDanglingLink]; otherwise the file need not exist. Close
// the place's Dir when done.
func NamedPlace(path string) (Place, error) {
	dir, name := filepath.Split(filepath.Clean(path))
	if name == "" || name == "." || name == ".." || name == string(filepath.Separator) {
		return Place{}, &fs.PathError{Op: "open", Path: path, Err: unix.EISDIR}
	}
	d, err := OpenDir(filepath.Clean(dir)) // "" is "."
	if err != nil {
		return Place{}, err
	}
	p := Place{Dir: d, Name: name}
	st, err := p.stat()
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return p, nil
	}
	// A final link: the kernel follows it (O_PATH: nothing is read, a
	// FIFO or device is not opened for I/O).
	fd, err := unix.Openat(d.fd, name, unix.O_PATH|unix.O_CLOEXEC, 0)
	d.Close()
	if errors.Is(err, unix.ENOENT) {
		err = ErrDanglingLink
	}
	if err != nil {
		return Place{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	return placeOf(fd, path)
}

// placeOf is the place of the file open at fd: the path the kernel gives
// for it (/proc/self/fd), its directory opened without following any
// symbolic link, and its name there checked to be that file.
func placeOf(fd int, path string) (Place, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Place{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	buf := make([]byte, unix.PathMax+1)
	n, err := unix.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd), buf)
	if err != nil {
		return Place{}, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("a symbolic link, and /proc is needed to find where its file is: %w", err)}
	}
	resolved := string(buf[:n])
	if !filepath.IsAbs(resolved) || n > unix.PathMax {
		return Place{}, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("a symbolic link to a file without a path here (%q)", resolved)}
	}
	dir, name := filepath.Split(resolved)
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Place{}, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	dfd, err := openBeneath(root, strings.TrimPrefix(filepath.Clean(dir), "/"), unix.O_PATH|unix.O_DIRECTORY)
	unix.Close(root)
	if err != nil {
		return Place{}, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (its directory %s %w)", ErrLinkMoved, dir, err)}
	}
	p := Place{Dir: &Dir{fd: dfd, path: filepath.Clean(dir)}, Name: name}
	now, err := p.stat()
	if err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		p.Dir.Close()
		return Place{}, &fs.PathError{Op: "open", Path: path, Err: ErrLinkMoved}
	}
	return p, nil
}

// ErrLinkMoved is the error of [NamedPlace] when the file a final symbolic
// link led to no longer has the name the kernel gave for it.
var ErrLinkMoved = errors.New("the file its symbolic link names was moved while sframe-gen opened it")

// stat is what fstatat says of the place's entry (a symbolic link itself,
// not what it names).
func (p Place) stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(p.Dir.fd, p.Name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// A Source is a regular file opened for reading at its place, with what
// it was when opened: a patch replaces the place's entry only while it is
// still that file, unchanged (see [TempFiles.Replace]).
type Source struct {
	Place
	File *os.File
	st   unix.Stat_t
}

// ErrNotRegular is the error of [OpenSource] for a place that holds
// something else than a regular file (a directory, FIFO, device, socket or
// symbolic link).
type ErrNotRegular struct{ Kind string }

// Error says what the place holds instead of a regular file.
func (e *ErrNotRegular) Error() string { return "not a regular file (" + e.Kind + ")" }

// OpenSource opens the regular file at p for reading. A symbolic link at p
// is not followed; a FIFO is not waited for (O_NONBLOCK).
func OpenSource(p Place) (*Source, error) {
	fd, err := unix.Openat(p.Dir.fd, p.Name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, &ErrNotRegular{Kind: "a symbolic link"}
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &ErrNotRegular{Kind: fileKind(st.Mode)}
	}
	// Back to blocking reads (O_NONBLOCK changes nothing for a regular
	// file, but keep the descriptor ordinary).
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	return &Source{Place: p, File: os.NewFile(uintptr(fd), p.Path()), st: st}, nil
}

// Close closes the file (not its Dir).
func (s *Source) Close() error { return s.File.Close() }

// Size is the file's size when it was opened.
func (s *Source) Size() int64 { return s.st.Size }

// Sparse reports whether the file has holes: fewer blocks allocated
// than its size needs (when it was opened).
func (s *Source) Sparse() bool { return s.st.Blocks*512 < s.st.Size }

// Mode is the file's permission and special bits.
func (s *Source) Mode() fs.FileMode { return unixMode(s.st.Mode) }

// Links is the file's number of hard links when it was opened.
func (s *Source) Links() uint64 { return uint64(s.st.Nlink) }

// ID is the file's device and inode number.
func (s *Source) ID() [2]uint64 { return [2]uint64{uint64(s.st.Dev), s.st.Ino} }

// Times are the file's access and modification times when it was opened
// (before anything read it).
func (s *Source) Times() (atime, mtime time.Time) {
	return time.Unix(s.st.Atim.Unix()), time.Unix(s.st.Mtim.Unix())
}

// ErrChanged is the error when a file changed, or its name was given to
// another file, while sframe-gen read it: the file is left alone.
var ErrChanged = errors.New("changed while sframe-gen read it (another process writes it, or replaced it); left as it is")

// unchanged checks that the file is as it was opened (size, modification
// and change times) and that p still names it.
func (s *Source) unchanged(p Place) error {
	var now unix.Stat_t
	if err := unix.Fstat(int(s.File.Fd()), &now); err != nil {
		return err
	}
	if now.Size != s.st.Size || now.Mtim != s.st.Mtim || now.Ctim != s.st.Ctim {
		return fmt.Errorf("%s %w", p.Path(), ErrChanged)
	}
	return s.names(p)
}

// names checks that p names the file s (same device and inode, not a
// symbolic link).
func (s *Source) names(p Place) error {
	st, err := p.stat()
	if err != nil || st.Dev != s.st.Dev || st.Ino != s.st.Ino {
		return fmt.Errorf("%s %w", p.Path(), ErrChanged)
	}
	return nil
}

// specialBits pairs the set-user-ID, set-group-ID and sticky bits of a
// stat mode with their fs.FileMode bits.
var specialBits = [...]struct {
	stat uint32
	mode fs.FileMode
}{{unix.S_ISUID, fs.ModeSetuid}, {unix.S_ISGID, fs.ModeSetgid}, {unix.S_ISVTX, fs.ModeSticky}}

// unixMode converts a stat mode's permission and special bits.
func unixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	for _, b := range specialBits {
		if m&b.stat != 0 {
			mode |= b.mode
		}
	}
	return mode
}

// modeBits converts fs mode bits back to a chmod mode.
func modeBits(m fs.FileMode) uint32 {
	bits := uint32(m.Perm())
	for _, b := range specialBits {
		if m&b.mode != 0 {
			bits |= b.stat
		}
	}
	return bits
}

// fileKind names a file type of a stat mode.
func fileKind(m uint32) string {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return "not a regular file"
}

// MkdirBeneath makes the directory rel below d (its parent must exist),
// without following a symbolic link, with mode 0700 until [Dir.Chmod]
// gives it its final mode: nothing made under it is reachable by others
// meanwhile. An existing directory is kept (made is false: the caller
// leaves its mode alone); an existing symbolic link or file there is an
// error.
func (d *Dir) MkdirBeneath(rel string) (dir *Dir, made bool, err error) {
	dir0, name := filepath.Split(filepath.Clean(rel))
	parent, err := d.Beneath(dir0)
	if err != nil {
		return nil, false, err
	}
	defer parent.Close()
	mkErr := unix.Mkdirat(parent.fd, name, 0o700)
	if mkErr != nil && !errors.Is(mkErr, unix.EEXIST) {
		return nil, false, &fs.PathError{Op: "mkdir", Path: parent.join(name), Err: mkErr}
	}
	if dir, err = d.Beneath(rel); err != nil {
		return nil, false, err
	}
	if made = mkErr == nil; made {
		if err := dir.checkMade(); err != nil {
			dir.Close()
			return nil, false, err
		}
	}
	return dir, made, nil
}

// Chmod gives the directory the mode bits of m (permission, set-group-ID
// and sticky bits).
func (d *Dir) Chmod(m fs.FileMode) error {
	// fchmod on an O_PATH descriptor fails: open the directory itself.
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Fchmod(fd, modeBits(m))
		unix.Close(fd)
	}
	if err != nil {
		return &fs.PathError{Op: "chmod", Path: d.path, Err: err}
	}
	return nil
}

// Symlink makes name in d a symbolic link to target, replacing what name
// was (never following it). A symbolic link already there to the same
// target is left as it is.
//
// The link is first made as if name were free: what is there is
// unlinked only when that fails (an unlink takes the directory's lock for
// writing, even when there is nothing to remove).
func (d *Dir) Symlink(target, name string) error {
	err := unix.Symlinkat(target, d.fd, name)
	if errors.Is(err, unix.EEXIST) {
		if old, rerr := (Place{Dir: d, Name: name}).Readlink(); rerr == nil && old == target {
			return nil
		}
		unix.Unlinkat(d.fd, name, 0)
		err = unix.Symlinkat(target, d.fd, name)
	}
	if err != nil {
		return &fs.PathError{Op: "symlink", Path: d.join(name), Err: err}
	}
	return nil
}

// Link makes to a hard link of the file at from, replacing what to was
// (never following a symbolic link at either place).
func Link(from, to Place) error {
	err := unix.Linkat(from.Dir.fd, from.Name, to.Dir.fd, to.Name, 0)
	if errors.Is(err, unix.EEXIST) {
		unix.Unlinkat(to.Dir.fd, to.Name, 0)
		err = unix.Linkat(from.Dir.fd, from.Name, to.Dir.fd, to.Name, 0)
	}
	if err != nil {
		return &fs.PathError{Op: "link", Path: to.Path(), Err: err}
	}
	return nil
}

// Readlink returns the target of the symbolic link at p.
func (p Place) Readlink() (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(p.Dir.fd, p.Name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: p.Path(), Err: err}
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 4*len(buf))
	}
}

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
	return &ErrNotRegular{Kind: fileKind(st.Mode)}
}

// Clone is another descriptor of the same directory (dup), for a caller
// that keeps it after d is closed. Close it when done.
func (d *Dir) Clone() (*Dir, error) {
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "dup", Path: d.path, Err: err}
	}
	return &Dir{fd: fd, path: d.path}, nil
}

// ID is the directory's device and inode number.
func (d *Dir) ID() ([2]uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return [2]uint64{}, &fs.PathError{Op: "stat", Path: d.path, Err: err}
	}
	return [2]uint64{uint64(st.Dev), st.Ino}, nil
}

// Sync flushes the directory's entries to the disk (fsync), through the
// directory held open: what its path names now does not matter.
func (d *Dir) Sync() error {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Fsync(fd)
		unix.Close(fd)
	}
	if err != nil {
		return &fs.PathError{Op: "sync", Path: d.path, Err: err}
	}
	return nil
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

// An Entry is what fstatat says of a name in a directory (a symbolic link
// itself, not what it names).
type Entry struct {
	Name            string
	Mode            fs.FileMode // type, permission and special bits
	Size            int64
	Dev, Ino, Nlink uint64
}

// entryOf converts a stat.
func entryOf(name string, st *unix.Stat_t) Entry {
	mode := unixMode(st.Mode)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return Entry{Name: name, Mode: mode, Size: st.Size, Dev: uint64(st.Dev), Ino: st.Ino, Nlink: uint64(st.Nlink)}
}

// Stat is what fstat says of the directory itself.
func (d *Dir) Stat() (Entry, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return Entry{}, &fs.PathError{Op: "stat", Path: d.path, Err: err}
	}
	return entryOf(filepath.Base(d.path), &st), nil
}

// Lstat is what fstatat says of the place's entry (a symbolic link itself).
func (p Place) Lstat() (Entry, error) {
	st, err := p.stat()
	if err != nil {
		return Entry{}, &fs.PathError{Op: "lstat", Path: p.Path(), Err: err}
	}
	return entryOf(p.Name, &st), nil
}

// List lists the directory through its descriptor, never by its path (a
// directory swapped for a symbolic link meanwhile is not listed instead),
// sorted by name, each entry as fstatat in d says of it. A name removed
// between the listing and its fstatat is left out.
func (d *Dir) List() ([]Entry, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: d.path, Err: unwrapPathError(err)}
	}
	slices.Sort(names)
	entries := make([]Entry, 0, len(names))
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(d.fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return nil, &fs.PathError{Op: "lstat", Path: d.join(n), Err: err}
		}
		entries = append(entries, entryOf(n, &st))
	}
	return entries, nil
}

// unwrapPathError is the error inside an *fs.PathError.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Writable checks that a file can be made in the directory (access(2),
// W_OK, through the descriptor): a read-only directory or file system is
// refused before any work.
func (d *Dir) Writable() error {
	if err := unix.Faccessat(d.fd, ".", unix.W_OK, 0); err != nil {
		return &fs.PathError{Op: "access", Path: d.path, Err: err}
	}
	return nil
}
