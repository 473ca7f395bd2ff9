//go:build linux

package replace

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"golang.org/x/sys/unix"
)

func TestJournalEncoding(t *testing.T) {
	caps, _ := hex.DecodeString("0100000200200000000000000000000000000000")
	for _, j := range []journal{
		{phase: phaseLink, mode: 0o4755, uid: -1, gid: -1},
		{phase: phaseRename, mode: 0o2711, uid: 65534, gid: 12, caps: caps, old: fileID{ino: 1 << 40, birth: 1764300000, birthNsec: 999999999, birthKnown: true, gen: 0xdeadbeef, genKnown: true}},
		{phase: phaseDone, mode: 0o755, uid: 0, gid: 0, caps: caps},
	} {
		got, ok := decodeJournal(j.encode())
		if !ok || got.phase != j.phase || got.mode != j.mode || got.uid != j.uid || got.gid != j.gid || !bytes.Equal(got.caps, j.caps) || got.old != j.old {
			t.Errorf("%+v: decoded %+v, %v", j, got, ok)
		}
	}
	good := journal{phase: phaseRename, mode: 0o755, uid: -1, gid: -1}.encode()
	for name, b := range map[string][]byte{
		"empty":       nil,
		"short":       good[:journalHeader-1],
		"version 2":   append([]byte{2}, good[1:]...),
		"phase x":     append([]byte{1, 'x'}, good[2:]...),
		"phase empty": append([]byte{1, 0}, good[2:]...),
	} {
		if j, ok := decodeJournal(b); ok {
			t.Errorf("%s: decoded as %+v", name, j)
		}
	}
}

func TestTempOf(t *testing.T) {
	for _, c := range []struct {
		name, base string
		ok         bool
	}{
		{".prog.sframe-gen-0123abcd", "prog", true},
		{".a.b.so.1.sframe-gen-ffffffff", "a.b.so.1", true},
		{"..sframe-gen-00000000", "", false},
		{".prog.sframe-gen-0123abc", "", false},   // 7 digits
		{".prog.sframe-gen-0123ABCD", "", false},  // not as Replace writes it
		{"prog.sframe-gen-0123abcd", "", false},   // no leading dot
		{".prog.sframe-gen-0123abcd~", "", false}, // a backup of one
		{"prog", "", false},
	} {
		base, ok := TempOf(c.name)
		if base != c.base || ok != c.ok {
			t.Errorf("TempOf(%q) = %q, %v; want %q, %v", c.name, base, ok, c.base, c.ok)
		}
	}
}

// TestResumeTemp: a temporary name with a journal in phase 1 is removed,
// one in phase 2 renamed over its name; one without a journal, with a
// journal in a namespace any user can write (user.*), or a symbolic link,
// is left alone.
func TestResumeTemp(t *testing.T) {
	sysfiles.NeedRoot(t, "trusted.* extended attributes")
	const tmp = ".prog.sframe-gen-0123abcd"
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  Resumed
		prog  string // prog's contents after
		left  bool   // tmp still there
	}{
		{"phase 1", func(t *testing.T, dir string) { setJournalAt(t, dir, journalXattr, phaseLink) }, Undone, "old", false},
		{"phase 2", func(t *testing.T, dir string) { setJournalAt(t, dir, journalXattr, phaseRename) }, Finished, "new", false},
		{"no journal", func(t *testing.T, dir string) {}, NotJournaled, "old", true},
		{"user journal", func(t *testing.T, dir string) { setJournalAt(t, dir, "user.sframe-gen.replace", phaseRename) }, NotJournaled, "old", true},
		{"phase 2, the name another file's since", func(t *testing.T, dir string) {
			setJournalAt(t, dir, journalXattr, phaseRename)
			os.Remove(filepath.Join(dir, "prog"))
			os.WriteFile(filepath.Join(dir, "other"), []byte("newer"), 0o755)
			os.Rename(filepath.Join(dir, "other"), filepath.Join(dir, "prog"))
		}, Undone, "newer", false},
		{"phase 2, the name removed since", func(t *testing.T, dir string) {
			setJournalAt(t, dir, journalXattr, phaseRename)
			os.Remove(filepath.Join(dir, "prog"))
		}, Undone, "", false},
		{"symbolic link", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, tmp))
			os.Symlink("prog", filepath.Join(dir, tmp))
		}, NotJournaled, "old", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "prog"), []byte("old"), 0o755)
			os.WriteFile(filepath.Join(dir, tmp), []byte("new"), 0o755)
			c.setup(t, dir)
			d, err := OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			got, err := ResumeTemp(d, tmp)
			if err != nil || got != c.want {
				t.Fatalf("ResumeTemp = %v, %v; want %v", got, err, c.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "prog")); string(b) != c.prog {
				t.Errorf("prog holds %q, want %q", b, c.prog)
			}
			if _, err := os.Lstat(filepath.Join(dir, tmp)); (err == nil) != c.left {
				t.Errorf("temporary name there after: %v, want %v", err == nil, c.left)
			}
		})
	}
}

// setJournalAt gives dir/.prog.sframe-gen-0123abcd a journal in phase
// under the attribute name, replacing the file at dir/prog.
func setJournalAt(t *testing.T, dir, name string, phase byte) {
	t.Helper()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	old, ok := idAt(d, "prog")
	if !ok {
		t.Fatal("no prog")
	}
	j := journal{phase: phase, mode: 0o4755, uid: -1, gid: -1, old: old}
	if err := unix.Setxattr(filepath.Join(dir, ".prog.sframe-gen-0123abcd"), name, j.encode(), 0); err != nil {
		t.Fatal(err)
	}
}

// TestSourceResume: a file left in phase 3 gets its owner, capabilities
// and mode from its journal, which goes; in phase 2 only when the caller
// knows all its names; in phase 1 (never a final name) it is an error.
func TestSourceResume(t *testing.T) {
	sysfiles.NeedRoot(t, "trusted.* extended attributes")
	caps, _ := hex.DecodeString("0100000200200000000000000000000000000000") // cap_net_raw=ep
	for _, c := range []struct {
		phase    byte
		allNames bool
		wantErr  string
	}{
		{phaseDone, false, ""},
		{phaseDone, true, ""},
		{phaseRename, true, ""},
		{phaseRename, false, "run sframe-gen again"},
		{phaseLink, true, "run sframe-gen again"},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "prog")
		os.WriteFile(p, []byte("new"), 0o755)
		j := journal{phase: c.phase, mode: 0o4755, uid: 65534, gid: 65534, caps: caps}
		if err := unix.Setxattr(p, journalXattr, j.encode(), 0); err != nil {
			t.Fatal(err)
		}
		pl, err := NamedPlace(p)
		if err != nil {
			t.Fatal(err)
		}
		src, err := OpenSource(pl)
		if err != nil {
			t.Fatal(err)
		}
		err = src.Resume(c.allNames)
		src.Close()
		pl.Dir.Close()
		var st unix.Stat_t
		unix.Stat(p, &st)
		buf := make([]byte, 64)
		n, _ := unix.Getxattr(p, capabilityXattr, buf)
		jn, _ := unix.Getxattr(p, journalXattr, nil)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("phase %c, all names %v: error %v, want one saying %q", c.phase, c.allNames, err, c.wantErr)
			}
			if st.Mode&0o7777 != 0o755 || n > 0 || jn == 0 {
				t.Errorf("phase %c, all names %v: mode %o, capability %x, journal %d bytes; want it left as it was", c.phase, c.allNames, st.Mode&0o7777, buf[:max(n, 0)], jn)
			}
			continue
		}
		if err != nil {
			t.Errorf("phase %c, all names %v: %v", c.phase, c.allNames, err)
			continue
		}
		if st.Mode&0o7777 != 0o4755 || st.Uid != 65534 || st.Gid != 65534 || n <= 0 || !bytes.Equal(buf[:n], caps) || jn > 0 {
			t.Errorf("phase %c, all names %v: mode %o owner %d:%d capability %x, journal %d bytes; want 4755 65534:65534 %x, none", c.phase, c.allNames, st.Mode&0o7777, st.Uid, st.Gid, buf[:max(n, 0)], jn, caps)
		}
	}
}

// TestMkdirMade: MkdirBeneath and MkdirNamed say whether they made the
// directory (0700, to be given its mode later), and leave one that was
// there as it is; a directory that is not the process's own 0700 one is
// refused by the check of a directory just made.
func TestMkdirMade(t *testing.T) {
	root := t.TempDir()
	d, made, err := MkdirNamed(filepath.Join(root, "out", "sub"))
	if err != nil || !made {
		t.Fatalf("MkdirNamed of a new directory: made %v, %v", made, err)
	}
	d.Close()
	if st, _ := os.Stat(filepath.Join(root, "out", "sub")); st.Mode().Perm() != 0o700 {
		t.Errorf("a directory made: mode %v, want 0700 until it is given its mode", st.Mode())
	}
	os.Mkdir(filepath.Join(root, "old"), 0o755)
	os.Chmod(filepath.Join(root, "old"), 0o755)
	d, made, err = MkdirNamed(filepath.Join(root, "old"))
	if err != nil || made {
		t.Fatalf("MkdirNamed of an existing directory: made %v, %v", made, err)
	}
	d.Close()
	top, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer top.Close()
	for _, c := range []struct {
		rel  string
		made bool
	}{{"old", false}, {"old/new", true}, {"old/new", false}} {
		d, made, err := top.MkdirBeneath(c.rel)
		if err != nil || made != c.made {
			t.Errorf("MkdirBeneath(%s): made %v, %v; want %v", c.rel, made, err, c.made)
			continue
		}
		d.Close()
	}
	if st, _ := os.Stat(filepath.Join(root, "old")); st.Mode().Perm() != 0o755 {
		t.Errorf("an existing directory: mode %v after, want 0755", st.Mode())
	}
	for _, mode := range []uint32{0o755, 0o701} {
		os.Chmod(filepath.Join(root, "old"), os.FileMode(mode))
		d, err := top.Beneath("old")
		if err != nil {
			t.Fatal(err)
		}
		if err := d.checkMade(); err == nil || !strings.Contains(err.Error(), "replaced by another directory") {
			t.Errorf("checkMade on a directory mode %o: %v", mode, err)
		}
		d.Close()
	}
	if os.Geteuid() == 0 {
		os.Chmod(filepath.Join(root, "old"), 0o700)
		os.Chown(filepath.Join(root, "old"), 65534, 65534)
		d, _ := top.Beneath("old")
		if err := d.checkMade(); err == nil {
			t.Errorf("checkMade on another user's 0700 directory: no error")
		}
		d.Close()
	}
}
