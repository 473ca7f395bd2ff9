package elfpatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ReplaceFile atomically replaces the file dst with what write produces.
//
// write gets a new temporary file named .NAME.sframe-gen-XXXX in dst's
// directory (so the rename stays within one file system). When write
// succeeds, the file gets dst's mode bits (perm if dst does not exist) and
// owner, is synced and renamed over dst, and the directory is synced. On any
// failure the temporary file is removed and dst is untouched. A symbolic
// link dst is resolved: its target is replaced, the link kept.
func ReplaceFile(dst string, perm fs.FileMode, write func(tmp *os.File) error) (err error) {
	if real, e := filepath.EvalSymlinks(dst); e == nil {
		dst = real
	} else if !errors.Is(e, fs.ErrNotExist) {
		return e
	}
	mode := perm
	uid, gid := -1, -1
	if st, e := os.Stat(dst); e == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", dst)
		}
		mode = st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if s, ok := st.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(s.Uid), int(s.Gid)
		}
	} else if !errors.Is(e, fs.ErrNotExist) {
		return e
	}
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".sframe-gen-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if uid >= 0 {
		if st, e := tmp.Stat(); e == nil {
			if s, ok := st.Sys().(*syscall.Stat_t); ok && (int(s.Uid) != uid || int(s.Gid) != gid) {
				if err = tmp.Chown(uid, gid); err != nil {
					return fmt.Errorf("keeping owner of %s: %w", dst, err)
				}
			}
		}
	}
	// Chmod after Chown: chown clears the set-user-ID bits.
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	if d, e := os.Open(dir); e == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
