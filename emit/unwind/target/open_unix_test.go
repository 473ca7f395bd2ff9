//go:build unix

package target

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpensOnlyRegular gives a walk's file reading a FIFO where a module
// was (a program replaced after its core was written): refused at once,
// named; and a live process's mapping that cannot be read through
// map_files is not read by its path instead.
func TestOpensOnlyRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "prog")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := openModuleAt("prog", fifo, 0, noLimit{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "a FIFO") {
			t.Errorf("a FIFO as a module: %v; want it refused as a FIFO", err)
		}
	case <-time.After(time.Minute):
		if f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("stack waited on a FIFO where a module was")
	}
	exe := filepath.Join("..", "..", "..", "testdata", "link", "x86_64", "pie.exe")
	path, err := mappedFile("", mapping{Start: 0x1000, Path: exe, File: filepath.Join(dir, "map_files", "1000-2000")})
	if err == nil {
		t.Errorf("a mapping whose map_files entry is gone was read by its path %s", path)
	}
}
