//go:build linux

package replace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// attrs are what a replaced file keeps: owner, mode (special bits
// included), every extended attribute (file capabilities, SELinux labels,
// POSIX ACLs, user.* ...) and its times.
type attrs struct {
	uid, gid     int
	mode         fs.FileMode
	xattrs       []xattr // in the order listxattr gave them
	atime, mtime time.Time
}

// xattr is one extended attribute.
type xattr struct {
	name  string
	value []byte
}

// capabilityXattr holds file capabilities: the kernel drops it when the
// file is written or its owner changes.
const capabilityXattr = "security.capability"

// readAttrs reads the attributes of the open file fd, st being its stat.
func readAttrs(fd int, st *unix.Stat_t) (attrs, error) {
	a := attrs{uid: int(st.Uid), gid: int(st.Gid), mode: unixMode(st.Mode),
		atime: time.Unix(st.Atim.Unix()), mtime: time.Unix(st.Mtim.Unix())}
	names, err := listXattrs(fd)
	if err != nil {
		return a, fmt.Errorf("listing extended attributes: %w", err)
	}
	for _, name := range names {
		if name == journalXattr {
			continue // an interrupted replacement's, never kept
		}
		v, err := getXattr(fd, name)
		if errors.Is(err, unix.ENODATA) {
			continue // removed meanwhile
		}
		if err != nil {
			return a, fmt.Errorf("reading extended attribute %s: %w", name, err)
		}
		a.xattrs = append(a.xattrs, xattr{name, v})
	}
	return a, nil
}

// listXattrs lists the names of fd's extended attributes (none where the
// file system has none).
func listXattrs(fd int) ([]string, error) {
	size := 256
	for {
		buf := make([]byte, size)
		n, err := unix.Flistxattr(fd, buf)
		switch {
		case errors.Is(err, unix.ERANGE):
			size *= 4
			continue
		case errors.Is(err, unix.ENOTSUP):
			return nil, nil
		case err != nil:
			return nil, err
		}
		var names []string
		for _, b := range bytes.Split(buf[:n], []byte{0}) {
			if len(b) > 0 {
				names = append(names, string(b))
			}
		}
		return names, nil
	}
}

// getXattr reads one extended attribute of fd.
func getXattr(fd int, name string) ([]byte, error) {
	size := 256
	for {
		buf := make([]byte, size)
		n, err := unix.Fgetxattr(fd, name, buf)
		if errors.Is(err, unix.ERANGE) {
			size *= 4
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}

// apply gives the file fd (new, written completely) the attributes a,
// but for the privileged ones (set-user-ID and set-group-ID bits, file
// capabilities: see [attrs.applyPrivileged]). The file stays the
// process's own (root's) when a is privileged and the process may give it
// its owner later (ownerLater): until it has its privileges no other user
// may write to it, so none can change what they are given to. The
// extended attributes the file got from its directory (an inherited
// default ACL, a default SELinux label) and a lacks are removed.
func (a attrs) apply(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if a.uid >= 0 && !a.ownerLater() && (int(st.Uid) != a.uid || int(st.Gid) != a.gid) {
		if err := unix.Fchown(fd, a.uid, a.gid); err != nil {
			return fmt.Errorf("keeping the owner %d:%d: %w", a.uid, a.gid, err)
		}
	}
	have, err := listXattrs(fd)
	if err != nil {
		return fmt.Errorf("listing extended attributes: %w", err)
	}
	keep := map[string]bool{}
	for _, x := range a.xattrs {
		keep[x.name] = true
	}
	for _, name := range have {
		if !keep[name] {
			if err := unix.Fremovexattr(fd, name); err != nil && !errors.Is(err, unix.ENODATA) {
				return fmt.Errorf("removing the inherited extended attribute %s: %w", name, err)
			}
		}
	}
	for _, x := range a.xattrs {
		if x.name == capabilityXattr {
			continue
		}
		if err := unix.Fsetxattr(fd, x.name, x.value, 0); err != nil {
			return fmt.Errorf("keeping the extended attribute %s: %w", x.name, err)
		}
	}
	// The mode last: an ACL sets the group bits, chown clears the
	// set-user-ID bits.
	if err := unix.Fchmod(fd, modeBits(a.mode&^(fs.ModeSetuid|fs.ModeSetgid))); err != nil {
		return fmt.Errorf("keeping the mode %v: %w", a.mode, err)
	}
	return nil
}

// ownerLater reports whether a new file with a's attributes gets its
// owner with its privileges, at the end: a privileged file, made by root.
func (a attrs) ownerLater() bool {
	return a.uid >= 0 && a.privileged() && os.Geteuid() == 0
}

// applyPrivileged gives fd its owner (when [attrs.ownerLater]), the
// set-user-ID and set-group-ID bits and the file capabilities of a, once
// the file has its final names (or again after a write in place, which
// drops them).
func (a attrs) applyPrivileged(fd int) error {
	return a.journalOf(phaseDone, fileID{}).give(fd)
}
