//go:build linux

package replace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// replaceFile is TempFiles.ReplaceFile without tracking.
func replaceFile(dst string, perm os.FileMode, write func(tmp *os.File) error) error {
	return (*TempFiles)(nil).ReplaceFile(dst, perm, write)
}

func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "prog")
	if err := os.WriteFile(dst, []byte("old"), 0o751); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("prog", link); err != nil {
		t.Fatal(err)
	}
	var tmpName string
	err := replaceFile(link, 0o644, func(tmp *os.File) error {
		tmpName = tmp.Name()
		if !strings.HasPrefix(filepath.Base(tmpName), ".prog.sframe-gen-") || filepath.Dir(tmpName) != dir {
			t.Errorf("temporary file %s", tmpName)
		}
		_, err := tmp.WriteString("new")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Stat(dst); st.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751", st.Mode())
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symbolic link replaced by a file")
	}
	if _, err := os.Stat(tmpName); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}

	// A failing write leaves dst untouched and no temporary file.
	boom := errors.New("boom")
	err = replaceFile(dst, 0o644, func(tmp *os.File) error {
		tmpName = tmp.Name()
		tmp.WriteString("partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content after failure %q", b)
	}
	if _, err := os.Stat(tmpName); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left after failure: %v", err)
	}

	// A new file gets perm.
	nf := filepath.Join(dir, "new")
	if err := replaceFile(nf, 0o640, func(tmp *os.File) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(nf); st.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v", st.Mode())
	}
	if err := replaceFile(dir, 0o640, func(tmp *os.File) error { return nil }); err == nil {
		t.Errorf("no error replacing a directory")
	}
}

func TestReplaceFilePanic(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "prog")
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("panic not passed on")
			}
		}()
		replaceFile(dst, 0o644, func(tmp *os.File) error {
			tmp.WriteString("partial")
			panic("boom")
		})
	}()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries after a panic in write, want 1 (temporary file left?)", len(ents))
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("content %q", b)
	}
}

func TestTempFilesRemoveAll(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "prog")
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var temps TempFiles
	var tmpName string
	// RemoveAll while write runs (as a signal handler would): the temporary
	// file goes at once, the rename does not happen.
	err := temps.ReplaceFile(dst, 0o644, func(tmp *os.File) error {
		tmpName = tmp.Name()
		tmp.WriteString("new")
		temps.RemoveAll()
		if _, err := os.Stat(tmpName); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temporary file still there after RemoveAll: %v", err)
		}
		return nil
	})
	if err == nil {
		t.Errorf("ReplaceFile succeeded after RemoveAll")
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("content %q, want old", b)
	}
	// No new temporary file after RemoveAll.
	called := false
	err = temps.ReplaceFile(dst, 0o644, func(tmp *os.File) error { called = true; return nil })
	if err == nil || called {
		t.Errorf("ReplaceFile after RemoveAll: err %v, write called %v", err, called)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want 1", len(ents))
	}
	// A nil *TempFiles tracks nothing and works.
	var none *TempFiles
	none.RemoveAll()
	if err := none.ReplaceFile(dst, 0o644, func(tmp *os.File) error { _, err := tmp.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
}

// TestTempFilesConcurrent checks that files are made and named through
// one TempFiles at once (a tree's workers), and that RemoveAll waits for
// those under way, then refuses the next ones: one worker stopped while it
// holds the gate (as in a slow system call making or naming its file), a
// second replaces its own file meanwhile; RemoveAll returns only once the
// first lets go.
func TestTempFilesConcurrent(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "b")
	var temps TempFiles
	unlock, err := temps.lock()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- temps.ReplaceFile(dst, 0o644, func(tmp *os.File) error {
			_, err := tmp.WriteString("new")
			return err
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		unlock()
		t.Fatal("a file could not be replaced while another was being made")
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
	removed := make(chan struct{})
	go func() {
		temps.RemoveAll()
		close(removed)
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-removed:
		t.Fatal("RemoveAll returned while a file was being made")
	default:
	}
	unlock()
	<-removed
	if _, err := temps.lock(); !errors.Is(err, errTempsClosed) {
		t.Errorf("after RemoveAll: %v, want %v", err, errTempsClosed)
	}
}

// TestTempFilesWaitFor checks that a ReplaceFile through TempFiles given
// WaitFor makes no file (write is not called, nothing is in the
// directory) until the channel is closed, then replaces the file.
func TestTempFilesWaitFor(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "prog")
	ready := make(chan struct{})
	var temps TempFiles
	temps.WaitFor(ready)
	var written atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- temps.ReplaceFile(dst, 0o644, func(tmp *os.File) error {
			written.Store(true)
			_, err := tmp.WriteString("new")
			return err
		})
	}()
	time.Sleep(50 * time.Millisecond)
	ents, _ := os.ReadDir(dir)
	if written.Load() || len(ents) != 0 {
		t.Fatalf("before ready: write called %v, %d entries", written.Load(), len(ents))
	}
	select {
	case err := <-done:
		t.Fatalf("ReplaceFile returned (%v) before ready", err)
	default:
	}
	close(ready)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
}

// TestReplaceNewFileNamedOnce checks that a new file (a new output, as
// --output-dir makes) is linked under its final name at once, without a
// temporary name renamed over it (inotify sees the one name made, and no
// rename), and that a file that comes to that name while the new one is
// written is still replaced.
func TestReplaceNewFileNamedOnce(t *testing.T) {
	dir := t.TempDir()
	if fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600); err != nil {
		t.Skipf("the file system of %s makes no file without a name (O_TMPFILE: %v): new files are named, then renamed", dir, err)
	} else {
		unix.Close(fd)
	}
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, dir, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		t.Skipf("no inotify: %v", err)
	}
	dst := filepath.Join(dir, "out.so")
	if err := replaceFile(dst, 0o644, func(tmp *os.File) error {
		_, err := tmp.WriteString("new")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	buf := make([]byte, 4096)
	n, err := unix.Read(in, buf)
	if err != nil {
		t.Fatalf("reading inotify events: %v", err)
	}
	var events []string
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
		kind := "created"
		if ev.Mask&unix.IN_MOVED_TO != 0 {
			kind = "renamed to"
		}
		events = append(events, kind+" "+name)
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
	if len(events) != 1 || events[0] != "created out.so" {
		t.Errorf("events in the directory: %q, want only [created out.so]", events)
	}

	// A file made at the name while the new one is written is replaced.
	late := filepath.Join(dir, "late.so")
	if err := replaceFile(late, 0o644, func(tmp *os.File) error {
		if err := os.WriteFile(late, []byte("other"), 0o600); err != nil {
			return err
		}
		_, err := tmp.WriteString("new")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(late); string(b) != "new" {
		t.Errorf("content %q, want new over the file made meanwhile", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("directory holds %d entries, want 2 (temporary name left?)", len(ents))
	}
}
