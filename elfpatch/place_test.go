package elfpatch

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
