package elfpatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// replaceFile atomically replaces the file dst with what write produces.
//
// write gets a new temporary file named .NAME.sframe-gen-XXXX in dst's
// directory (so the rename stays within one file system). When write
// succeeds, the file gets dst's mode bits (perm if dst does not exist) and
// owner and is renamed over dst. When dst exists, the file is synced before
// the rename and the directory after it, so that a crash leaves either the
// old or the new contents, never a truncated file; a new dst is not synced
// (like cp, ld and objcopy: there is nothing to lose, and syncing a 200 MB
// output costs more than making it). On any
// failure (a panic in write included) the temporary file is removed and dst
// is untouched. A symbolic link dst is resolved: its target is replaced, the
// link kept.
//
// A process killed while ReplaceFile runs leaves the temporary file behind;
// [TempFiles.ReplaceFile] lets a signal handler remove it.
func replaceFile(dst string, perm fs.FileMode, write func(tmp *os.File) error) error {
	return (*TempFiles)(nil).ReplaceFile(dst, perm, write)
}

// TempFiles is the set of temporary files ReplaceFile calls made through it
// have open, so that a signal handler can remove them before the process
// exits (see [TempFiles.RemoveAll]). The zero value is ready to use; a nil
// *TempFiles tracks nothing. It is safe for concurrent use.
type TempFiles struct {
	mu     sync.Mutex
	names  map[string]bool
	closed bool
}

// errTempsClosed is returned by ReplaceFile after RemoveAll.
var errTempsClosed = errors.New("interrupted: no new temporary file")

// create makes a temporary file in dir and records its name, both under the
// lock, so RemoveAll never misses a file that exists.
func (t *TempFiles) create(dir, pattern string) (*os.File, error) {
	if t == nil {
		return os.CreateTemp(dir, pattern)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errTempsClosed
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if t.names == nil {
		t.names = map[string]bool{}
	}
	t.names[f.Name()] = true
	return f, nil
}

// rename renames each temporary file to its destination (pairs of
// temporary name, destination) unless RemoveAll has run, and forgets them.
// The renames are done under the lock, so a signal handler's RemoveAll
// waits until all of them are done: the links of one file are replaced
// together.
func (t *TempFiles) rename(pairs ...[2]string) error {
	if t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.closed {
			return errTempsClosed
		}
	}
	for _, p := range pairs {
		if t != nil {
			delete(t.names, p[0])
		}
		if err := os.Rename(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// copyOver copies the file src over the contents of dst (same inode),
// under the lock, and syncs dst.
func (t *TempFiles) copyOver(src, dst string) error {
	if t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.closed {
			return errTempsClosed
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := out.Truncate(0); err != nil {
		return err
	}
	if err := CopySparse(out, in, st.Size()); err != nil {
		return fmt.Errorf("writing %s in place: %w", dst, err)
	}
	if err := out.Truncate(st.Size()); err != nil {
		return err
	}
	return out.Sync()
}

// link makes a new hard link to tmp in dir, recorded like a temporary file.
func (t *TempFiles) link(tmp, dir, pattern string) (string, error) {
	if t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.closed {
			return "", errTempsClosed
		}
	}
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf("%s%d-%d", pattern, os.Getpid(), i))
		err := os.Link(tmp, name)
		if errors.Is(err, fs.ErrExist) && i < 1000 {
			continue
		}
		if err != nil {
			return "", err
		}
		if t != nil {
			if t.names == nil {
				t.names = map[string]bool{}
			}
			t.names[name] = true
		}
		return name, nil
	}
}

func (t *TempFiles) remove(tmp string) {
	if t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.names, tmp)
	}
	os.Remove(tmp)
}

// RemoveAll removes every temporary file still open through t and makes
// later ReplaceFile calls through t fail, so none is created or renamed
// after it: call it from a signal handler, then exit. A rename already done
// stands (dst then holds the complete new contents).
func (t *TempFiles) RemoveAll() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for name := range t.names {
		os.Remove(name)
	}
	t.names = nil
}

// ReplaceFile is [replaceFile] with the temporary file recorded in t while
// it exists.
func (t *TempFiles) ReplaceFile(dst string, perm fs.FileMode, write func(tmp *os.File) error) error {
	return t.Replace(dst, perm, ReplaceOptions{}, write)
}

// ReplaceOptions are what [TempFiles.Replace] does beyond ReplaceFile.
type ReplaceOptions struct {
	// Links are other names (hard links) of dst: they are replaced by
	// links to the new file, together with dst (a signal handler's
	// RemoveAll waits until all are renamed), so they stay one file.
	Links []string
	// KeepTimes gives the new file dst's access and modification times
	// (as strip -p).
	KeepTimes bool
	// InPlace writes the new contents into dst's own inode instead of
	// renaming a new file over it, for a file with hard links not in
	// Links (as objcopy does for such a file). The temporary file is made
	// complete first and copied over dst under t's lock, so a signal
	// handler's RemoveAll waits for the copy to end; only a crash during
	// the copy can leave dst partly written.
	InPlace bool
	// NoSync replaces dst without syncing the new file first (nor the
	// directory after the rename), as cp, ld and objcopy write: other
	// processes, and a signal, still see the old or the new file, but
	// after a crash only a file system that orders the data of a file
	// renamed over another before the rename (ext4's auto_da_alloc, the
	// default; btrfs) guarantees it.
	NoSync bool
	// DirSynced, when set, is called with the directory of dst instead of
	// syncing it after the rename: a caller replacing many files syncs
	// each directory once at the end. Until then a crash may undo the
	// rename, leaving the old contents (never a partial file: the new
	// file is synced before the rename).
	DirSynced func(dir string)
	// Written, when set, is called once the temporary file is complete,
	// before it is synced and renamed (the wait for the disk): a caller
	// that bounds its CPU work can start on another file then.
	Written func()
}

// Replace is [TempFiles.ReplaceFile] with the options of opt.
func (t *TempFiles) Replace(dst string, perm fs.FileMode, opt ReplaceOptions, write func(tmp *os.File) error) (err error) {
	old, err := statTarget(dst, perm)
	if err != nil {
		return err
	}
	tmp, err := t.create(old.dir, "."+filepath.Base(old.path)+".sframe-gen-")
	if err != nil {
		return err
	}
	renamed := false
	var linkTemps []string
	defer func() {
		if !renamed { // an error, or a panic in write
			tmp.Close()
			t.remove(tmp.Name())
			for _, l := range linkTemps {
				t.remove(l)
			}
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = old.finish(tmp, opt); err != nil {
		return err
	}
	if opt.InPlace && old.replacing {
		if err = t.copyOver(tmp.Name(), old.path); err != nil {
			return err
		}
		return old.keepTimes(old.path, opt) // the deferred function removes the temporary file
	}
	pairs := [][2]string{{tmp.Name(), old.path}}
	for _, l := range opt.Links {
		ldir, lbase := filepath.Split(l)
		if ldir == "" {
			ldir = "."
		}
		name, err := t.link(tmp.Name(), ldir, "."+lbase+".sframe-gen-")
		if err != nil {
			return fmt.Errorf("linking the new %s as %s: %w", old.path, l, err)
		}
		linkTemps = append(linkTemps, name)
		pairs = append(pairs, [2]string{name, l})
	}
	if err = t.rename(pairs...); err != nil {
		return err
	}
	renamed = true
	if old.replacing && !opt.NoSync {
		old.syncDirs(opt)
	}
	return nil
}

// replaced is what Replace keeps of the file it replaces: where it is, and
// the mode, owner and times the new file gets.
type replaced struct {
	path, dir    string
	mode         fs.FileMode
	uid, gid     int // -1 when not known
	replacing    bool
	atime, mtime time.Time
}

// statTarget resolves a symbolic link dst and records what the file there
// is; a dst that does not exist is a new file of mode perm.
func statTarget(dst string, perm fs.FileMode) (replaced, error) {
	old := replaced{path: dst, mode: perm, uid: -1, gid: -1}
	if real, e := filepath.EvalSymlinks(dst); e == nil {
		old.path = real
	} else if !errors.Is(e, fs.ErrNotExist) {
		return old, e
	}
	old.dir = filepath.Dir(old.path)
	st, e := os.Stat(old.path)
	if errors.Is(e, fs.ErrNotExist) {
		return old, nil
	} else if e != nil {
		return old, e
	}
	if !st.Mode().IsRegular() {
		return old, fmt.Errorf("%s is not a regular file", old.path)
	}
	old.replacing = true
	old.mode = st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	old.mtime, old.atime = st.ModTime(), st.ModTime()
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		old.uid, old.gid = int(s.Uid), int(s.Gid)
		old.atime = time.Unix(s.Atim.Unix())
	}
	return old, nil
}

// finish gives the complete temporary file the old file's owner and mode,
// syncs it when it replaces a file (unless opt.NoSync), closes it and, with
// opt.KeepTimes, gives it the old file's times.
func (old replaced) finish(tmp *os.File, opt ReplaceOptions) error {
	if old.uid >= 0 {
		if st, e := tmp.Stat(); e == nil {
			if s, ok := st.Sys().(*syscall.Stat_t); ok && (int(s.Uid) != old.uid || int(s.Gid) != old.gid) {
				if err := tmp.Chown(old.uid, old.gid); err != nil {
					return fmt.Errorf("keeping owner of %s: %w", old.path, err)
				}
			}
		}
	}
	// Chmod after Chown: chown clears the set-user-ID bits.
	if err := tmp.Chmod(old.mode); err != nil {
		return err
	}
	if opt.Written != nil {
		opt.Written()
	}
	if old.replacing && !opt.NoSync {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return old.keepTimes(tmp.Name(), opt)
}

// keepTimes gives the file name the old file's times, with opt.KeepTimes.
func (old replaced) keepTimes(name string, opt ReplaceOptions) error {
	if !opt.KeepTimes || !old.replacing {
		return nil
	}
	if err := os.Chtimes(name, old.atime, old.mtime); err != nil {
		return fmt.Errorf("keeping the times of %s: %w", old.path, err)
	}
	return nil
}

// syncDirs syncs the directories of the renamed file and its links, or
// hands them to opt.DirSynced.
func (old replaced) syncDirs(opt ReplaceOptions) {
	if opt.DirSynced != nil {
		opt.DirSynced(old.dir)
		for _, l := range opt.Links {
			if ldir := filepath.Dir(l); ldir != old.dir {
				opt.DirSynced(ldir)
			}
		}
		return
	}
	if d, e := os.Open(old.dir); e == nil {
		d.Sync()
		d.Close()
	}
}
