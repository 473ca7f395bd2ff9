//go:build unix

package elfread

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenRegular opens a regular file, and refuses at once, naming what
// it is, a FIFO without a writer (never waiting on it), a directory and a
// character device.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "file")
	if err := os.WriteFile(reg, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want string // want: "" for a file opened
	}{
		{reg, ""},
		{fifo, "not a regular file (a FIFO)"},
		{dir, "not a regular file (a directory)"},
		{"/dev/null", "not a regular file (a character device)"},
	}
	for _, tc := range tests {
		done := make(chan error, 1)
		go func() {
			f, st, err := OpenRegular(tc.path)
			if err == nil {
				if st.Size() != 4 {
					t.Errorf("%s: size %d, want 4", tc.path, st.Size())
				}
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("OpenRegular(%s): %v, want %q", tc.path, err, tc.want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("OpenRegular(%s) waited", tc.path)
		}
	}
}
