//go:build linux

package replace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

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
		return nil, &fs.PathError{Op: "readdirent", Path: d.path, Err: UnwrapPath(err)}
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

// Writable checks that a file can be made in the directory (access(2),
// W_OK, through the descriptor): a read-only directory or file system is
// refused before any work.
func (d *Dir) Writable() error {
	if err := unix.Faccessat(d.fd, ".", unix.W_OK, 0); err != nil {
		return &fs.PathError{Op: "access", Path: d.path, Err: err}
	}
	return nil
}
