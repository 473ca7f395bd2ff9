//go:build linux

package replace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

func leftTemps(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".sframe-gen-") {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
}

// TestReplaceOptions: Links are replaced with the file and stay one inode;
// InPlace keeps the inode (and so the links not named); KeepTimes keeps the
// times; after RemoveAll nothing is written.
func TestReplaceOptions(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "sub", "c")
	os.Mkdir(filepath.Dir(c), 0o755)
	if err := os.WriteFile(a, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Link(a, b)
	os.Link(a, c)
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	os.Chtimes(a, old, old)
	write := func(s string) func(*os.File) error {
		return func(tmp *os.File) error { _, err := tmp.WriteString(s); return err }
	}
	var temps TempFiles
	place := func(p string) Place {
		pl, err := NamedPlace(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pl.Dir.Close() })
		return pl
	}
	open := func(p string) *Source {
		s, err := OpenSource(place(p))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	if err := temps.Replace(place(a), open(a), 0o644, ReplaceOptions{Links: []Place{place(b), place(c)}, KeepTimes: true}, write("new")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{b, c} {
		if got, _ := os.ReadFile(p); string(got) != "new" || inode(t, p) != inode(t, a) {
			t.Errorf("%s: %q, inode %d, want \"new\" and a's inode %d", p, got, inode(t, p), inode(t, a))
		}
	}
	if st, _ := os.Stat(a); !st.ModTime().Equal(old) || st.Mode().Perm() != 0o640 {
		t.Errorf("a: mtime %v mode %v, want %v 0640", st.ModTime(), st.Mode(), old)
	}

	ino := inode(t, a)
	if err := temps.Replace(place(a), open(a), 0o644, ReplaceOptions{InPlace: true}, write("newer, longer")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{a, b, c} {
		if got, _ := os.ReadFile(p); string(got) != "newer, longer" || inode(t, p) != ino {
			t.Errorf("%s: %q, inode %d, want the same inode %d", p, got, inode(t, p), ino)
		}
	}
	leftTemps(t, dir)
	leftTemps(t, filepath.Dir(c))

	temps.RemoveAll()
	if err := temps.Replace(place(a), open(a), 0o644, ReplaceOptions{Links: []Place{place(b)}}, write("x")); err == nil {
		t.Errorf("Replace after RemoveAll succeeded")
	}
	if got, _ := os.ReadFile(a); string(got) != "newer, longer" {
		t.Errorf("a changed after RemoveAll: %q", got)
	}
}
