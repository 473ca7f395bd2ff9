//go:build linux

package replace

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/sframe-gen/sframe-gen/elfpatch/sparse"
)

// writeInPlace writes the complete new file tmp over dst's own inode
// (ReplaceOptions.InPlace), under t's gate: dst must still be the source,
// unchanged. The space the new contents need is reserved first
// (fallocate), so a full disk fails before a byte is written; then the
// contents are written over the old ones, holes punched where the new file
// has holes, and the file cut to its new size last. Writing drops file
// capabilities (and, for a writer other than root, the set-user-ID bits):
// they are given back.
func (t *TempFiles) writeInPlace(dst Place, old replaced, tmp *tempFile, opt ReplaceOptions) error {
	st, err := tmp.f.Stat()
	if err != nil {
		return err
	}
	n := st.Size()
	unlock, err := t.lock()
	if err != nil {
		return err
	}
	defer unlock()
	fd, err := unix.Openat(dst.Dir.fd, dst.Name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("opening %s to write it in place: %w", dst.Path(), err)
	}
	out := os.NewFile(uintptr(fd), dst.Path())
	defer out.Close()
	if err := old.sourceUnchanged(); err != nil {
		return err
	}
	if old.src != nil {
		var now unix.Stat_t
		if err := unix.Fstat(fd, &now); err != nil || now.Dev != old.src.st.Dev || now.Ino != old.src.st.Ino {
			return fmt.Errorf("%s %w", dst.Path(), ErrChanged)
		}
	}
	if n > 0 {
		if err := unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, n); err != nil {
			return fmt.Errorf("reserving %d bytes to write %s in place (its other hard links keep its inode): %w; left as it is", n, dst.Path(), err)
		}
	}
	if err := sparse.CopyOver(out, tmp.f, n); err != nil {
		return fmt.Errorf("writing %s in place: %w", dst.Path(), err)
	}
	if err := out.Truncate(n); err != nil {
		return fmt.Errorf("writing %s in place: %w", dst.Path(), err)
	}
	if err := old.applyPrivileged(fd); err != nil {
		return fmt.Errorf("%s: %w", dst.Path(), err)
	}
	if opt.KeepTimes {
		if err := old.keepTimes(fd); err != nil {
			return fmt.Errorf("keeping the times of %s: %w", dst.Path(), err)
		}
	}
	if opt.NoSync {
		return nil
	}
	return out.Sync()
}
