//go:build linux

package replace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A replacement of a file that is privileged (set-user-ID or set-group-ID
// bits, file capabilities) or has other names (Links) is journaled in an
// extended attribute of the new file, in the trusted namespace (only a
// process with CAP_SYS_ADMIN can set or read it, so no other user can
// forge one): [TempFiles.Replace] sets it before the new file has any
// name, moves it through its phases as the names are made and replaced,
// and removes it once the file has all its names and its privileged
// attributes. A process killed (SIGKILL) on the way leaves the journal on
// the new file, with what is needed to finish: [ResumeTemp] for a
// temporary name it left, [Source.Resume] for a name already replaced.
// docs/robustness.md, "What a kill can leave", gives the windows.
const journalXattr = "trusted.sframe-gen.replace"

// Journal phases.
const (
	phaseLink   = 'l' // temporary names being made: undo (remove them)
	phaseRename = 'r' // every temporary name made, names being replaced: finish
	phaseDone   = 'd' // every name replaced, privileged attributes being given
)

// journal is what a replacement records: its phase and the owner and
// privileged attributes the new file gets once it has all its names.
type journal struct {
	phase    byte
	mode     uint32 // chmod bits, set-user-ID and set-group-ID included
	uid, gid int32  // the owner to give, or -1
	caps     []byte // security.capability's value, or nil
	// old is the file the names held (0: none), so that a name given to
	// another file since the kill is not replaced.
	old fileID
}

// fileID tells a file from another that may have had its inode number:
// the inode number, its birth time and generation where the file system
// says (the birth time alone is not enough: ext4 gives a freed inode
// number to the next file made, in the same clock tick).
type fileID struct {
	ino        uint64
	birth      int64
	birthNsec  uint32
	birthKnown bool
	gen        uint32
	genKnown   bool
}

// fsIocGetVersion is FS_IOC_GETVERSION, _IOR('v', 1, long) (linux/fs.h),
// which x/sys/unix does not name: an inode's generation number.
const fsIocGetVersion = 0x80007601 | uint(unsafe.Sizeof(uintptr(0)))<<16

// idAt is the fileID of name in dir (not following a symbolic link); ok
// is false when there is nothing there.
func idAt(dir *Dir, name string) (id fileID, ok bool) {
	var sx unix.Statx_t
	if err := unix.Statx(dir.fd, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &sx); err != nil {
		return fileID{}, false
	}
	id.ino = sx.Ino
	if sx.Mask&unix.STATX_BTIME != 0 {
		id.birth, id.birthNsec, id.birthKnown = sx.Btime.Sec, sx.Btime.Nsec, true
	}
	if sx.Mode&unix.S_IFMT == unix.S_IFREG {
		if fd, err := unix.Openat(dir.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0); err == nil {
			if g, err := unix.IoctlGetInt(fd, fsIocGetVersion); err == nil {
				id.gen, id.genKnown = uint32(g), true
			}
			unix.Close(fd)
		}
	}
	return id, true
}

// same reports whether a and b are one file.
func (a fileID) same(b fileID) bool {
	return a.ino == b.ino && (!a.birthKnown || !b.birthKnown || a.birth == b.birth && a.birthNsec == b.birthNsec) &&
		(!a.genKnown || !b.genKnown || a.gen == b.gen)
}

// journalHeader is the size of an encoded journal without capabilities.
const journalHeader = 14 + 8 + 1 + 8 + 4 + 1 + 4

func (j journal) encode() []byte {
	b := make([]byte, journalHeader, journalHeader+len(j.caps))
	b[0], b[1] = 1, j.phase // version 1
	binary.LittleEndian.PutUint32(b[2:], j.mode)
	binary.LittleEndian.PutUint32(b[6:], uint32(j.uid))
	binary.LittleEndian.PutUint32(b[10:], uint32(j.gid))
	binary.LittleEndian.PutUint64(b[14:], j.old.ino)
	if j.old.birthKnown {
		b[22] = 1
	}
	binary.LittleEndian.PutUint64(b[23:], uint64(j.old.birth))
	binary.LittleEndian.PutUint32(b[31:], j.old.birthNsec)
	if j.old.genKnown {
		b[35] = 1
	}
	binary.LittleEndian.PutUint32(b[36:], j.old.gen)
	return append(b, j.caps...)
}

func decodeJournal(b []byte) (journal, bool) {
	if len(b) < journalHeader || b[0] != 1 {
		return journal{}, false
	}
	j := journal{phase: b[1], mode: binary.LittleEndian.Uint32(b[2:]),
		uid: int32(binary.LittleEndian.Uint32(b[6:])), gid: int32(binary.LittleEndian.Uint32(b[10:])),
		old: fileID{ino: binary.LittleEndian.Uint64(b[14:]), birthKnown: b[22] == 1,
			birth: int64(binary.LittleEndian.Uint64(b[23:])), birthNsec: binary.LittleEndian.Uint32(b[31:]),
			genKnown: b[35] == 1, gen: binary.LittleEndian.Uint32(b[36:])}}
	if len(b) > journalHeader {
		j.caps = append([]byte(nil), b[journalHeader:]...)
	}
	switch j.phase {
	case phaseLink, phaseRename, phaseDone:
		return j, true
	}
	return journal{}, false
}

// journalOf is the journal of a replacement by old of the file old (0:
// none): the owner (when given at the end) and privileged attributes its
// new file gets then.
func (a attrs) journalOf(phase byte, old fileID) journal {
	j := journal{phase: phase, mode: modeBits(a.mode), uid: -1, gid: -1, old: old}
	if a.ownerLater() {
		j.uid, j.gid = int32(a.uid), int32(a.gid)
	}
	for _, x := range a.xattrs {
		if x.name == capabilityXattr {
			j.caps = x.value
		}
	}
	return j
}

// privileged reports whether a has set-user-ID or set-group-ID bits or
// file capabilities: what a file gets only once it has all its names.
func (a attrs) privileged() bool {
	if a.mode&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
		return true
	}
	for _, x := range a.xattrs {
		if x.name == capabilityXattr {
			return true
		}
	}
	return false
}

// setJournal records j on fd; false when it cannot (a process without
// CAP_SYS_ADMIN, a file system without extended attributes).
func setJournal(fd int, j journal) error {
	return unix.Fsetxattr(fd, journalXattr, j.encode(), 0)
}

// readJournal reads fd's journal; ok is false when it has none.
func readJournal(fd int) (journal, bool) {
	b, err := getXattr(fd, journalXattr)
	if err != nil {
		return journal{}, false
	}
	return decodeJournal(b)
}

// give gives fd the owner and privileged attributes of j: the owner
// first (a change of owner drops capabilities and set-user-ID bits), the
// capabilities, the mode last.
func (j journal) give(fd int) error {
	if j.uid >= 0 {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if int32(st.Uid) != j.uid || int32(st.Gid) != j.gid {
			if err := unix.Fchown(fd, int(j.uid), int(j.gid)); err != nil {
				return fmt.Errorf("keeping the owner %d:%d: %w", j.uid, j.gid, err)
			}
		}
	}
	if j.caps != nil {
		if err := unix.Fsetxattr(fd, capabilityXattr, j.caps, 0); err != nil {
			return fmt.Errorf("keeping the file capabilities: %w", err)
		}
	}
	if err := unix.Fchmod(fd, j.mode); err != nil {
		return fmt.Errorf("keeping the mode %o: %w", j.mode, err)
	}
	return nil
}

// finishJournal gives fd the owner and privileged attributes of j and
// removes the journal.
func finishJournal(fd int, j journal) error {
	if err := j.give(fd); err != nil {
		return err
	}
	if err := unix.Fremovexattr(fd, journalXattr); err != nil && !errors.Is(err, unix.ENODATA) {
		return fmt.Errorf("removing the journal of its replacement: %w", err)
	}
	return nil
}

// tempSuffix ends a temporary name Replace gives, before 8 hex digits.
const tempSuffix = ".sframe-gen-"

// TempOf reports whether name is a temporary name [TempFiles.Replace]
// gives (.NAME.sframe-gen-XXXXXXXX, X a lower-case hex digit), and the
// NAME it stands next to.
func TempOf(name string) (string, bool) {
	const digits = 8
	n := len(name) - digits - len(tempSuffix)
	if n < 2 || name[0] != '.' || name[n:n+len(tempSuffix)] != tempSuffix {
		return "", false
	}
	for _, c := range name[len(name)-digits:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return name[1:n], true
}

// ResumeTemp finishes or undoes what a replacement killed on its way left
// at the temporary name tmp in dir (see [TempOf]): a file with its journal
// in the phase where its temporary names were being made is removed (the
// names it was to replace are as they were); one in the phase where the
// names were being replaced is renamed over its name, as the killed
// process would have done, while that name still holds the file it
// replaced (else it is removed: the name was given to another file since).
// Anything else is left alone.
func ResumeTemp(dir *Dir, tmp string) (Resumed, error) {
	name, ok := TempOf(tmp)
	if !ok {
		return NotJournaled, nil
	}
	fd, err := unix.Openat(dir.fd, tmp, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return NotJournaled, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return NotJournaled, nil
	}
	j, ok := readJournal(fd)
	if !ok {
		return NotJournaled, nil
	}
	// The name must still hold the file the killed run replaced (or
	// nothing, when it replaced nothing): one given to another file since
	// (a newer version installed) is not replaced by this older one.
	now, there := idAt(dir, name)
	stale := there && (j.old.ino == 0 || !now.same(j.old)) || !there && j.old.ino != 0
	if j.phase == phaseLink || stale {
		if err := unix.Unlinkat(dir.fd, tmp, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return NotJournaled, fmt.Errorf("removing %s, left by an interrupted run: %w", dir.join(tmp), err)
		}
		return Undone, nil
	}
	if err := unix.Renameat(dir.fd, tmp, dir.fd, name); err != nil {
		return NotJournaled, fmt.Errorf("replacing %s with %s, as an interrupted run was doing: %w", dir.join(name), tmp, err)
	}
	return Finished, nil
}

// Resume finishes a replacement of the file that was killed after its
// names were replaced (its journal says so, or says the names were being
// replaced and allNames is set: the caller found every name of the file
// and none is a temporary name any more): the file gets its set-user-ID
// and set-group-ID bits and capabilities (and its owner, when root kept
// it until then) and loses the journal. A file without a journal is left
// alone; one whose names are not all replaced yet is an error saying how
// to finish (not naming the file). s is updated to the file as it is
// after.
func (s *Source) Resume(allNames bool) error {
	fd := int(s.File.Fd())
	j, ok := readJournal(fd)
	if !ok {
		return nil
	}
	if j.phase == phaseLink || j.phase == phaseRename && !allNames {
		return fmt.Errorf("a run killed while it replaced this file's %d names left some of them on the old file (next to each, .NAME.sframe-gen-XXXXXXXX): run sframe-gen again over a directory holding them all to finish", s.st.Nlink)
	}
	if err := finishJournal(fd, j); err != nil {
		return fmt.Errorf("finishing an interrupted replacement: %w", err)
	}
	return unix.Fstat(fd, &s.st)
}
