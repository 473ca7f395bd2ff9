package sframegen

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestLargestFirst: the workers take the biggest files first (a big file
// taken last would finish alone), files of one size in the order of the
// walk, then every path that is not a regular file, in the order of the
// walk.
func TestLargestFirst(t *testing.T) {
	files := []*TreeFile{
		{Mode: fs.ModeDir, Size: 4096},
		{Size: 10},
		{Mode: fs.ModeSymlink, Size: 1 << 20},
		{Size: 30},
		{Size: 10},
		{Err: fs.ErrNotExist},
		{Size: 20},
		{Size: 0},
	}
	got := largestFirst(files)
	want := []int{3, 6, 1, 4, 7, 0, 2, 5}
	if !slices.Equal(got, want) {
		t.Errorf("largestFirst = %v, want %v", got, want)
	}
}

// TestSyncHeldDirs swaps, as nobody, a directory a tree was written into
// (synced at the end: dirSyncer) for a link to nobody's FIFO, the
// kernel's protections on: the sync goes through the directory held, and
// neither waits on nor opens the FIFO.
func TestSyncHeldDirs(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("not root (CI=true runs as root: no test may skip)")
		}
		t.Skip("needs root: run the tests as root (as .ci/run does)")
	}
	for _, name := range []string{"protected_symlinks", "protected_fifos", "protected_regular"} {
		p := "/proc/sys/fs/" + name
		old, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(p, []byte("1\n"), 0)
		}
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("setting fs.%s: %v (CI=true: no test may skip)", name, err)
			}
			t.Skipf("cannot set fs.%s (a container with /proc/sys read-only?): %v", name, err)
		}
		t.Cleanup(func() { os.WriteFile(p, old, 0) })
	}
	setpriv := sysfiles.NeedProgram(t, "setpriv")
	asNobody := func(args ...string) {
		t.Helper()
		cmd := exec.Command(setpriv, append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("as nobody: %v: %v\n%s", args, err, out)
		}
	}
	scratch, err := os.MkdirTemp("", "sframe-kernel-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	os.Chmod(scratch, 0o755)
	parent := filepath.Join(scratch, "nobody")
	os.Mkdir(parent, 0o755)
	os.Chown(parent, 65534, 65534)
	dir := filepath.Join(parent, "d")
	asNobody("mkdir", dir)
	d, err := elfpatch.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	syncer := newDirSyncer()
	syncer.add(d)
	asNobody("sh", "-c", `mv "$1/d" "$1/d.old" && mkfifo "$1/fifo" && ln -s "$1/fifo" "$1/d"`, "sh", parent)
	done := make(chan struct{})
	go func() { syncer.sync(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		// Let the sync's open of the FIFO end, so the test ends.
		if f, err := os.OpenFile(filepath.Join(parent, "fifo"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatalf("the directory sync opened the FIFO put at its path, and waited")
	}
}
