//go:build linux

package replace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MkdirNamed makes the directory path as the user named it (its missing
// parents mode 0755, as mkdir -p makes them), mode 0700 until [Dir.Chmod] gives it
// its final mode, and opens it. An existing directory is opened as it is
// (made is false: the caller leaves its mode alone).
func MkdirNamed(path string) (dir *Dir, made bool, err error) {
	if parent := filepath.Dir(filepath.Clean(path)); parent != "." {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, false, err
		}
	}
	err = unix.Mkdir(path, 0o700)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, false, &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	made = err == nil
	if dir, err = OpenDir(path); err != nil {
		return nil, false, err
	}
	if made {
		if err := dir.checkMade(); err != nil {
			dir.Close()
			return nil, false, err
		}
	}
	return dir, made, nil
}

// checkMade checks that d, just made 0700 by this process, is still that
// directory: owned by this process's user, its group and others without
// access. Another directory put at its name between the mkdir and the
// open (by a user who may write its parent) is refused rather than given
// a mode.
func (d *Dir) checkMade() error {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: d.path, Err: err}
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
		return fmt.Errorf("%s: replaced by another directory (owner %d, mode %o) as it was made; left as it is", d.path, st.Uid, st.Mode&0o7777)
	}
	return nil
}
