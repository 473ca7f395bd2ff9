//go:build linux

package replace

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// TempFiles is the set of temporary files [TempFiles.Replace] calls made
// through it have named, so that a signal handler can remove them before
// the process exits (see [TempFiles.RemoveAll]). The zero value is ready to
// use; a nil *TempFiles tracks nothing. It is safe for concurrent use.
type TempFiles struct {
	// gate is held for reading while a file is made, named or written
	// in place (lock), by each worker at once, and for writing by
	// RemoveAll, which so waits for those under way and stops the
	// next ones.
	gate   sync.RWMutex
	closed bool // under gate
	mu     sync.Mutex
	names  map[tempName]bool // under mu
	// named makes every new file with a name, as on a file system
	// without O_TMPFILE (tests).
	named bool
	// ready, when not nil, is closed once new files may be made
	// (WaitFor).
	ready <-chan struct{}
}

// WaitFor makes the calls through t that make, publish or replace a file
// wait until ready is closed: for a caller that meanwhile installs the
// signal handler calling RemoveAll off its own path (os/signal.Notify
// waits for a thread the Go runtime starts for signals, 0.3-0.6 ms at the
// start of each run on this project's virtual machine), so that no file
// is made before it can be removed. Call it before any other call
// through t.
func (t *TempFiles) WaitFor(ready <-chan struct{}) { t.ready = ready }

// tempName is a temporary file's name in its directory.
type tempName struct {
	dir  *Dir
	name string
}

// errTempsClosed is returned by Replace after RemoveAll.
var errTempsClosed = errors.New("interrupted: no new temporary file")

// lock takes t's gate for reading unless t is nil, and fails after
// RemoveAll. The returned function releases it. Calls on other files go
// on meanwhile: only RemoveAll waits for it.
func (t *TempFiles) lock() (func(), error) {
	if t == nil {
		return func() {}, nil
	}
	if t.ready != nil {
		<-t.ready
	}
	t.gate.RLock()
	if t.closed {
		t.gate.RUnlock()
		return nil, errTempsClosed
	}
	return t.gate.RUnlock, nil
}

// record notes a named temporary file (t's gate held).
func (t *TempFiles) record(n tempName) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.names == nil {
		t.names = map[tempName]bool{}
	}
	t.names[n] = true
}

// forget drops a temporary file from the record.
func (t *TempFiles) forget(n tempName) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.names, n)
}

// RemoveAll removes every named temporary file of t and makes later
// Replace calls through t fail, so none is created or renamed after it:
// call it from a signal handler, then exit. A rename already done stands
// (the file then holds the complete new contents); one under way is
// finished first, with all the links of its file.
func (t *TempFiles) RemoveAll() {
	if t == nil {
		return
	}
	t.gate.Lock()
	defer t.gate.Unlock()
	t.closed = true
	t.mu.Lock()
	defer t.mu.Unlock()
	for n := range t.names {
		unix.Unlinkat(n.dir.fd, n.name, 0)
	}
	t.names = nil
}

// ReplaceFile replaces the file path names (a symbolic link followed by
// the kernel to its target, the link kept: [OutputPlace]) with what write
// produces, through [TempFiles.Replace]. A new file gets perm.
func (t *TempFiles) ReplaceFile(path string, perm fs.FileMode, write func(tmp *os.File) error) error {
	dst, err := OutputPlace(path)
	if err != nil {
		return err
	}
	defer dst.Dir.Close()
	return t.Replace(dst, nil, perm, ReplaceOptions{}, write)
}

// Replace replaces the file at dst with what write produces, atomically:
// write fills a new file in dst's directory, which takes the place of dst
// (renameat) only once complete, so other processes see the old file or
// the new one, never a part. On any failure (a panic in write included)
// dst is left as it was and no temporary file remains.
//
// src is the file being patched, or nil. When dst names src, the file is
// patched in place: just before the rename, dst must still name src and
// src be unchanged (size, modification and change times) since it was
// opened; else [ErrChanged] and nothing is written. So a symbolic link or
// another file put at dst meanwhile is never written through, nor replaced
// by what src held.
//
// The new file keeps every attribute of the file it replaces (owner, mode
// with its special bits, extended attributes: file capabilities, SELinux
// labels, POSIX ACLs, user.*), those it would inherit from its directory
// (a default ACL) removed; one that cannot be kept is an error, dst left as
// it was. A new dst gets the mode perm. The new file is made without a name
// (O_TMPFILE) where the file system allows, so a process killed meanwhile
// leaves nothing; elsewhere it is named .NAME.sframe-gen-XXXX, mode 0600.
// Either way it gets its set-user-ID and set-group-ID bits and file
// capabilities only once it has all its final names, so no privileged file
// ever has a temporary name; a privileged or linked file's replacement is
// journaled so that the next run finishes what a kill left ([ResumeTemp],
// [Source.Resume]). When dst exists, the file is
// synced before the rename and the directory after it (unless opt.NoSync),
// so that a crash leaves the old or the new contents.
func (t *TempFiles) Replace(dst Place, src *Source, perm fs.FileMode, opt ReplaceOptions, write func(tmp *os.File) error) (err error) {
	old, err := replacedAt(dst, src, perm)
	if err != nil {
		return err
	}
	tmp, err := t.create(dst)
	if err != nil {
		return fmt.Errorf("creating a temporary file in %s: %w", dst.Dir.path, immutableDir(dst.Dir, err))
	}
	defer tmp.discard(t)
	if err = write(tmp.f); err != nil {
		if e := old.sourceUnchanged(); e != nil {
			// The file changed under the read: say that, not what
			// the read stumbled on.
			return e
		}
		return err
	}
	if opt.InPlace && old.replacing {
		if opt.Written != nil {
			opt.Written()
		}
		return t.writeInPlace(dst, old, tmp, opt)
	}
	if err = old.finish(tmp, opt); err != nil {
		return err
	}
	if err = t.publish(dst, old, tmp, opt.Links); err != nil {
		return err
	}
	if old.replacing && !opt.NoSync {
		syncDirs(dst, opt)
	}
	return nil
}

// replaced is what Replace keeps of the file it replaces.
type replaced struct {
	attrs
	src       *Source // the file read, or nil
	inPlace   bool    // dst names src
	replacing bool    // dst exists
	timed     bool    // the times are known (dst's, or the source's)
}

// replacedAt records what the file at dst is: the source itself (patched
// in place), another regular file (replaced), or nothing (made with perm).
// A symbolic link at dst is replaced, not followed.
func replacedAt(dst Place, src *Source, perm fs.FileMode) (replaced, error) {
	old := replaced{attrs: attrs{uid: -1, gid: -1, mode: perm}}
	if src != nil && src.names(dst) == nil {
		a, err := readAttrs(int(src.File.Fd()), &src.st)
		if err != nil {
			return old, fmt.Errorf("%s: %w", dst.Path(), err)
		}
		old.attrs, old.src, old.inPlace, old.replacing, old.timed = a, src, true, true, true
		return old, checkWritable(int(src.File.Fd()), dst)
	}
	if src != nil { // -p on a new output: the input's times
		old.src = src
		old.atime, old.mtime = src.Times()
		old.timed = true
	}
	fd, err := unix.Openat(dst.Dir.fd, dst.Name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ELOOP):
		return old, nil // new, or a symbolic link: replaced by the file
	case err != nil:
		return old, &fs.PathError{Op: "open", Path: dst.Path(), Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return old, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return old, fmt.Errorf("%s is not a regular file (%s)", dst.Path(), fileKind(st.Mode))
	}
	a, err := readAttrs(fd, &st)
	if err != nil {
		return old, fmt.Errorf("%s: %w", dst.Path(), err)
	}
	if src != nil {
		a.atime, a.mtime = old.atime, old.mtime
	}
	old.attrs, old.replacing, old.timed = a, true, true
	return old, checkWritable(fd, dst)
}

// Inode flags of FS_IOC_GETFLAGS (linux/fs.h), which x/sys/unix does not name.
const (
	fsImmutable  = 0x10 // FS_IMMUTABLE_FL, chattr +i
	fsAppendOnly = 0x20 // FS_APPEND_FL, chattr +a
)

// sourceUnchanged checks that the source is as it was opened and still
// has its name: what was made of it is what it holds.
func (old replaced) sourceUnchanged() error {
	if old.src == nil {
		return nil
	}
	return old.src.unchanged(old.src.Place)
}

// checkWritable fails with a clear message when the file fd (at dst) is
// immutable or append-only (chattr +i, +a): its name cannot be replaced.
func checkWritable(fd int, dst Place) error {
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return nil // a file system without such flags
	}
	switch {
	case flags&fsImmutable != 0:
		return fmt.Errorf("%s is immutable (chattr +i); left as it is", dst.Path())
	case flags&fsAppendOnly != 0:
		return fmt.Errorf("%s is append-only (chattr +a); left as it is", dst.Path())
	}
	return nil
}

// tempFile is Replace's new file: without a name (O_TMPFILE) until it is
// published, or named.
type tempFile struct {
	f     *os.File
	dir   *Dir
	named string // its name, or "" while it has none
	anon  bool   // made without a name (O_TMPFILE)
	done  bool   // published: nothing to discard
}

// create makes the new file in dst's directory.
func (t *TempFiles) create(dst Place) (*tempFile, error) {
	unlock, err := t.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	display := dst.Dir.join("." + dst.Name + ".sframe-gen-new")
	fd, err := unix.Openat(dst.Dir.fd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil && t != nil && t.named {
		unix.Close(fd)
		err = unix.EOPNOTSUPP
	}
	if err == nil {
		return &tempFile{f: os.NewFile(uintptr(fd), display), dir: dst.Dir, anon: true}, nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, err
	}
	name, fd, err := createNamed(dst.Dir, dst.Name)
	if err != nil {
		return nil, err
	}
	t.record(tempName{dst.Dir, name})
	return &tempFile{f: os.NewFile(uintptr(fd), dst.Dir.join(name)), dir: dst.Dir, named: name}, nil
}

// createNamed makes a new file .BASE.sframe-gen-XXXX in dir, mode 0600.
func createNamed(dir *Dir, base string) (string, int, error) {
	for try := 0; ; try++ {
		name := fmt.Sprintf(".%s.sframe-gen-%08x", base, rand.Uint32())
		fd, err := unix.Openat(dir.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue
		}
		return name, fd, err
	}
}

// discard removes the new file unless it was published.
func (tf *tempFile) discard(t *TempFiles) {
	if tf.done {
		return
	}
	tf.f.Close()
	if tf.named != "" {
		if t != nil {
			// Forgotten and removed at once: RemoveAll removes it
			// or finds it gone.
			t.mu.Lock()
			defer t.mu.Unlock()
			delete(t.names, tempName{tf.dir, tf.named})
		}
		unix.Unlinkat(tf.dir.fd, tf.named, 0)
	}
}

// finish gives the complete new file the old file's attributes but the
// privileged ones (given by publish once the file has all its names),
// syncs it when it replaces a file (unless opt.NoSync) and gives it the
// old times with opt.KeepTimes.
func (old replaced) finish(tmp *tempFile, opt ReplaceOptions) error {
	fd := int(tmp.f.Fd())
	if err := old.apply(fd); err != nil {
		return err
	}
	if opt.Written != nil {
		opt.Written()
	}
	if old.replacing && !opt.NoSync {
		if err := tmp.f.Sync(); err != nil {
			return err
		}
	}
	if opt.KeepTimes && old.timed {
		if err := old.keepTimes(fd); err != nil {
			return fmt.Errorf("keeping the times: %w", err)
		}
	}
	return nil
}

// keepTimes gives fd a's times.
func (a attrs) keepTimes(fd int) error {
	ts := []unix.Timespec{unix.NsecToTimespec(a.atime.UnixNano()), unix.NsecToTimespec(a.mtime.UnixNano())}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), ts, 0); err == nil {
		return nil
	}
	// Without /proc: microseconds (futimes).
	tv := []unix.Timeval{unix.NsecToTimeval(a.atime.UnixNano()), unix.NsecToTimeval(a.mtime.UnixNano())}
	return unix.Futimes(fd, tv)
}

// publish gives the new file dst's name and the names of links, under t's
// gate (a signal handler's RemoveAll waits until all are done), once it is
// checked that dst and each link still name the source, unchanged. The
// file gets its privileged attributes (set-user-ID and set-group-ID bits,
// file capabilities) only once it has all its names: no temporary name
// ever holds a privileged file. A file that is privileged or has links is
// journaled (resume.go) while its names are made and replaced, so that
// what a kill leaves can be finished or undone by the next run.
func (t *TempFiles) publish(dst Place, old replaced, tmp *tempFile, links []Place) error {
	unlock, err := t.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := old.sourceUnchanged(); err != nil {
		return err
	}
	if old.src != nil {
		for _, l := range links {
			if err := old.src.names(l); err != nil {
				return err
			}
		}
	}
	fd := int(tmp.f.Fd())
	privileged := old.privileged()
	// No journal where it cannot be kept (no CAP_SYS_ADMIN, no extended
	// attributes): then what a kill leaves is not resumed.
	var oldID fileID
	journaled := false
	if privileged || len(links) > 0 {
		if old.replacing {
			oldID, _ = idAt(dst.Dir, dst.Name)
		}
		journaled = setJournal(fd, old.journalOf(phaseLink, oldID)) == nil
	}
	if tmp.anon && !old.replacing && !journaled && len(links) == 0 {
		// A new file (--output-dir, -o): named at once, no rename.
		// Should a file have come to dst meanwhile, it is replaced
		// below, as it would have been.
		switch err := tmp.linkAs(dst.Dir, dst.Name); {
		case err == nil:
			tmp.done = true
			defer tmp.f.Close()
			if privileged {
				if err := old.applyPrivileged(fd); err != nil {
					return fmt.Errorf("%s: %w", dst.Path(), err)
				}
			}
			return nil
		case !errors.Is(err, unix.EEXIST):
			return fmt.Errorf("naming the new %s: %w", dst.Path(), err)
		}
	}
	if tmp.anon {
		name, err := tmp.link(dst.Dir, dst.Name)
		if err != nil {
			return fmt.Errorf("naming the new %s: %w", dst.Path(), err)
		}
		tmp.named = name
		t.record(tempName{dst.Dir, name})
	}
	moves := []tempName{{dst.Dir, tmp.named}}
	for _, l := range links {
		name, err := tmp.link(l.Dir, l.Name)
		if err != nil {
			t.unlinkTemps(moves[1:])
			return fmt.Errorf("linking the new %s as %s: %w", dst.Path(), l.Path(), err)
		}
		t.record(tempName{l.Dir, name})
		moves = append(moves, tempName{l.Dir, name})
	}
	if journaled {
		if err := setJournal(fd, old.journalOf(phaseRename, oldID)); err != nil {
			t.unlinkTemps(moves[1:])
			return fmt.Errorf("journaling the replacement of %s: %w", dst.Path(), err)
		}
	}
	if err := unix.Renameat(dst.Dir.fd, tmp.named, dst.Dir.fd, dst.Name); err != nil {
		t.unlinkTemps(moves[1:])
		return renameError(dst, err)
	}
	t.forget(moves[0])
	tmp.done = true
	defer tmp.f.Close()
	for i, l := range links {
		if err := unix.Renameat(l.Dir.fd, moves[i+1].name, l.Dir.fd, l.Name); err != nil {
			t.unlinkTemps(moves[i+1:])
			return fmt.Errorf("replacing %s: %w", l.Path(), err)
		}
		t.forget(moves[i+1])
	}
	switch {
	case journaled:
		j := old.journalOf(phaseDone, oldID)
		if err := setJournal(fd, j); err != nil {
			return fmt.Errorf("journaling the replacement of %s: %w", dst.Path(), err)
		}
		if err := finishJournal(fd, j); err != nil {
			return fmt.Errorf("%s: %w", dst.Path(), err)
		}
	case privileged:
		if err := old.applyPrivileged(fd); err != nil {
			return fmt.Errorf("%s: %w", dst.Path(), err)
		}
	}
	return nil
}

// unlinkTemps removes temporary names not renamed (t's gate held).
func (t *TempFiles) unlinkTemps(names []tempName) {
	for _, n := range names {
		unix.Unlinkat(n.dir.fd, n.name, 0)
		t.forget(n)
	}
}

// link gives the new file one more name in dir: a temporary name next to
// name, returned.
func (tf *tempFile) link(dir *Dir, name string) (string, error) {
	for try := 0; ; try++ {
		n := fmt.Sprintf(".%s.sframe-gen-%08x", name, rand.Uint32())
		err := tf.linkAs(dir, n)
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue
		}
		return n, err
	}
}

// linkAs gives the new file the name n in dir (EEXIST if it is taken).
func (tf *tempFile) linkAs(dir *Dir, n string) error {
	if tf.named != "" {
		return unix.Linkat(tf.dir.fd, tf.named, dir.fd, n, 0)
	}
	err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", tf.f.Fd()), dir.fd, n, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.ENOENT) { // no /proc: a privileged process may link the descriptor
		err = unix.Linkat(int(tf.f.Fd()), "", dir.fd, n, unix.AT_EMPTY_PATH)
	}
	return err
}

// renameError says why dst could not be replaced, naming an immutable
// directory.
func renameError(dst Place, err error) error {
	return fmt.Errorf("replacing %s: %w", dst.Path(), immutableDir(dst.Dir, err))
}

// immutableDir turns EPERM for a change in dir into a message naming an
// immutable or append-only directory.
func immutableDir(dir *Dir, err error) error {
	if !errors.Is(err, unix.EPERM) {
		return err
	}
	fd, e := unix.Openat(dir.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if e != nil {
		return err
	}
	defer unix.Close(fd)
	if flags, e := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); e == nil && flags&(fsImmutable|fsAppendOnly) != 0 {
		return fmt.Errorf("its directory %s is immutable or append-only (chattr); left as it is", dir.path)
	}
	return err
}

// syncDirs syncs the directories of the renamed file and its links, or
// hands them to opt.DirSynced.
func syncDirs(dst Place, opt ReplaceOptions) {
	dirs := []*Dir{dst.Dir}
	for _, l := range opt.Links {
		dirs = append(dirs, l.Dir)
	}
	seen := map[*Dir]bool{}
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		if opt.DirSynced != nil {
			opt.DirSynced(d)
			continue
		}
		d.Sync()
	}
}
