//go:build linux

package replace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// OpenNamed opens for reading the regular file the user named path, as
// Process opens it: its directory and name resolved by the kernel
// (NamedPlace: a final symbolic link followed), then OpenSource. The
// errors do not name the file.
func OpenNamed(path string) (*Source, error) {
	at, err := NamedPlace(path)
	if err != nil {
		return nil, UnwrapPath(err)
	}
	defer at.Dir.Close()
	src, err := OpenSource(at)
	if err != nil {
		return nil, UnwrapPath(err)
	}
	return src, nil
}

// OpenSource opens the regular file at p for reading. A symbolic link at p
// is not followed; a FIFO is not waited for (O_NONBLOCK).
func OpenSource(p Place) (*Source, error) {
	fd, err := unix.Openat(p.Dir.fd, p.Name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, &NotRegularError{Kind: "a symbolic link"}
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
		return nil, &NotRegularError{Kind: fileKind(st.Mode)}
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
