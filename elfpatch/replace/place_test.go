//go:build linux

package replace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSymlinkAndLink checks that Dir.Symlink and Link make their name
// whatever was there, and that Symlink leaves a link already right as it
// is (the directory not written: its modification time kept).
func TestSymlinkAndLink(t *testing.T) {
	ino := func(t *testing.T, path string) uint64 {
		t.Helper()
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	tests := []struct {
		name   string
		before func(path string) error // what is at the name first; nil: nothing
		kept   bool                    // Symlink must leave it (the directory unmodified)
	}{
		{name: "free"},
		{name: "same target", before: func(p string) error { return os.Symlink("target", p) }, kept: true},
		{name: "other target", before: func(p string) error { return os.Symlink("elsewhere", p) }},
		{name: "file", before: func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			path := filepath.Join(dir, "l")
			if tt.before != nil {
				if err := tt.before(path); err != nil {
					t.Fatal(err)
				}
			}
			old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
			if err := d.Symlink("target", "l"); err != nil {
				t.Fatal(err)
			}
			if got, err := os.Readlink(path); err != nil || got != "target" {
				t.Fatalf("Symlink: readlink = %q, %v; want \"target\"", got, err)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if kept := fi.ModTime().Equal(old); kept != tt.kept {
				t.Errorf("Symlink left the directory unmodified: %v, want %v", kept, tt.kept)
			}

			// Link over whatever is there now, then over a free name.
			src := filepath.Join(dir, "src")
			if err := os.WriteFile(src, []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"l", "free"} {
				if err := Link(Place{Dir: d, Name: "src"}, Place{Dir: d, Name: name}); err != nil {
					t.Fatal(err)
				}
				if ino(t, filepath.Join(dir, name)) != ino(t, src) {
					t.Errorf("Link to %s: not a hard link of src", name)
				}
			}
		})
	}
}

// TestNamedPlaceFollowsThroughKernel checks where NamedPlace puts a name
// that is a symbolic link, followed by open(2): the target's directory and
// name (through a chain of links, relative ones too), and a link to
// nothing refused, nothing created.
func TestNamedPlaceFollowsThroughKernel(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	target := filepath.Join(sub, "target")
	os.WriteFile(target, []byte("x"), 0o644)
	os.Symlink("sub/target", filepath.Join(dir, "rel"))
	os.Symlink(filepath.Join(dir, "rel"), filepath.Join(dir, "chain"))
	os.Symlink("sub/none", filepath.Join(dir, "dangling"))
	for _, name := range []string{"target", "rel", "chain"} {
		path := filepath.Join(dir, name)
		if name == "target" {
			path = target
		}
		p, err := NamedPlace(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := p.Path(); got != target {
			t.Errorf("%s: place %s, want %s", name, got, target)
		}
		p.Dir.Close()
	}
	if _, err := NamedPlace(filepath.Join(dir, "dangling")); !errors.Is(err, ErrDanglingLink) {
		t.Errorf("a link to nothing: %v, want ErrDanglingLink", err)
	}
	if _, err := os.Lstat(filepath.Join(sub, "none")); err == nil {
		t.Errorf("a file was created through the link to nothing")
	}
	p, err := NamedPlace(filepath.Join(dir, "new"))
	if err != nil || p.Path() != filepath.Join(dir, "new") {
		t.Errorf("a new name: %v %v", p, err)
	}
}

// TestOpenSink checks which destinations are written as they are: the
// user's own FIFO (without a reader: held, opened at the first write,
// which then waits for the reader), /dev/null; a regular file or nothing
// is for a replacement (nil); another device and a directory are refused,
// named.
func TestOpenSink(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := NamedPlace(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Dir.Close()
	w, err := OpenSink(p) // no reader yet: must not wait
	if err != nil || w == nil {
		t.Fatalf("own FIFO: %v, %v", w, err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	if _, err := w.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b := <-got; string(b) != "line\n" {
		t.Errorf("the FIFO's reader got %q", b)
	}
	for _, c := range []struct{ path, err string }{
		{"/dev/null", ""},
		{filepath.Join(dir, "new"), "nil"},
		{"/dev/zero", "not a regular file (a character device)"},
		{dir, "is a directory"},
	} {
		p, err := NamedPlace(c.path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := OpenSink(p)
		p.Dir.Close()
		switch {
		case c.err == "" && (err != nil || w == nil):
			t.Errorf("%s: %v, %v; want it opened", c.path, w, err)
		case c.err == "nil" && (err != nil || w != nil):
			t.Errorf("%s: %v, %v; want nil (replaced)", c.path, w, err)
		case c.err != "" && c.err != "nil" && (err == nil || err.Error() != c.err):
			t.Errorf("%s: %v; want %q", c.path, err, c.err)
		}
		if w != nil {
			w.Close()
		}
	}
}
