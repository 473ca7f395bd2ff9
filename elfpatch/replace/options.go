package replace

import (
	"io/fs"
	"strconv"
	"strings"
)

// The declarations of this file are the same on every system (elsewhere
// than on linux, unsupported.go declares the functions, which fail).

// ReplaceOptions are what [TempFiles.Replace] does beyond the replacement.
type ReplaceOptions struct {
	// Links are other names (hard links) of dst: they are replaced by
	// links to the new file, together with dst (a signal handler's
	// RemoveAll waits until all are renamed), so they stay one file. Each
	// must still name the source file when the names are replaced.
	Links []Place
	// KeepTimes gives the new file the source's access and modification
	// times as they were when it was opened (as strip -p), or dst's when
	// there is no source.
	KeepTimes bool
	// InPlace writes the new contents into dst's own inode instead of
	// renaming a new file over it, for a file with hard links not in
	// Links (as objcopy does for such a file). The new contents are made
	// complete first; then the space they need is reserved, they are
	// written over the old ones and the file is cut to their size last,
	// so a full disk fails before anything is written. Only a crash (or
	// SIGKILL) during the copy can leave the file partly written.
	InPlace bool
	// NoSync replaces dst without syncing the new file first (nor the
	// directory after the rename), as cp, ld and objcopy write: other
	// processes, and a signal, still see the old or the new file, but
	// after a crash only a file system that orders the data of a file
	// renamed over another before the rename (ext4's auto_da_alloc, the
	// default; btrfs) guarantees it.
	NoSync bool
	// DirSynced, when set, is called with dst's directory instead of
	// syncing it after the rename: a caller replacing many files syncs
	// each directory once at the end, through the directory held open
	// ([Dir.Clone] keeps it past Replace; [Dir.Sync]), never by its path
	// again. Until then a crash may undo the rename, leaving the old
	// contents (never a partial file: the new file is synced before the
	// rename).
	DirSynced func(dir *Dir)
	// Written, when set, is called once the temporary file is complete,
	// before it is synced and renamed (the wait for the disk): a caller
	// that bounds its CPU work can start on another file then.
	Written func()
}

// An Entry is what fstatat says of a name in a directory (a symbolic link
// itself, not what it names).
type Entry struct {
	Name            string
	Mode            fs.FileMode // type, permission and special bits
	Size            int64
	Dev, Ino, Nlink uint64
}

// NotRegularError is the error of [OpenSource] for a place that holds
// something else than a regular file (a directory, FIFO, device, socket or
// symbolic link).
type NotRegularError struct{ Kind string }

// Error says what the place holds instead of a regular file.
func (e *NotRegularError) Error() string { return "not a regular file (" + e.Kind + ")" }

// Resumed is what [ResumeTemp] did with a temporary name.
type Resumed int

const (
	// NotJournaled: the name holds no journaled replacement (not one of
	// sframe-gen's, or made where no journal could be kept): left alone.
	NotJournaled Resumed = iota
	// Undone: a replacement killed before its names were replaced; the
	// temporary name was removed.
	Undone
	// Finished: a replacement killed while its names were replaced; the
	// temporary name was renamed over the name it stands for. The file
	// gets its privileged attributes from [Source.Resume] once all its
	// names are replaced.
	Finished
)

// InheritedFD returns the descriptor that path names for this process
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), if it names one.
func InheritedFD(path string) (int, bool) {
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
