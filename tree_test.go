package sframegen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
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

// TestTreeLinksMeanwhile: under an output directory, the symbolic links
// of a tree are made again while its files are processed, from the
// start, not after them on the workers' CPU tokens: the first file's
// Begin waits for every link's Done (a tree of libraries has one or two
// links a file; made last, they were the run's last tenth on one CPU).
func TestTreeLinksMeanwhile(t *testing.T) {
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	data, err := os.ReadFile(filepath.Join("testdata", "link", "x86_64", "direct.so"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, name+".so.1"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, link := range []string{name + ".so", "lib" + name + ".so"} {
			if err := os.Symlink(name+".so.1", filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
		}
	}
	g, err := NewGenerator(Options{}, Resources{})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Walk([]string{dir}, WalkOptions{OutputDir: out})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	links := 0
	for _, f := range tree.Files {
		if f.Mode&fs.ModeSymlink != 0 {
			links++
		}
	}
	if links != 4 {
		t.Fatalf("the walk found %d symbolic links, want 4", links)
	}
	linked := make(chan int, len(tree.Files))
	var once sync.Once
	err = g.ProcessTree(tree, TreeOptions{
		Workers: 1,
		Begin: func(int) {
			once.Do(func() {
				for range links {
					select {
					case <-linked:
					case <-time.After(20 * time.Second):
						t.Errorf("the links were not made while the first file was processed")
						return
					}
				}
			})
		},
		Done: func(i int, o *Outcome, err error) {
			if err != nil {
				t.Errorf("%s: %v", tree.Files[i].Path, err)
			}
			if tree.Files[i].Mode&fs.ModeSymlink != 0 {
				linked <- i
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tree.Files {
		if f.Mode&fs.ModeSymlink == 0 {
			continue
		}
		want, _ := os.Readlink(f.Path)
		if got, err := os.Readlink(f.Output); err != nil || got != want {
			t.Errorf("%s: %q, %v; want a link to %q", f.Output, got, err, want)
		}
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
	d, err := replace.OpenDir(dir)
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

// TestProcessTree walks a small tree (ELF files, one with a second name,
// a text file, a symbolic link, a subdirectory) and processes it on two
// workers: Done once a path, Begin once a regular file, Ordered in the
// order of the walk; the hard links stay one file; a second run finds
// every ELF file up to date. Two operands with one output under an
// output directory are an *OutputClashError.
func TestProcessTree(t *testing.T) {
	dir := t.TempDir()
	copyTo := func(src, dst string) {
		data, err := os.ReadFile(filepath.Join("testdata", "link", "x86_64", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyTo("direct.so", "a.so")
	copyTo("lazy.so", "sub/b.so")
	copyTo("demo.pic.o", "sub/c.o")
	os.Link(filepath.Join(dir, "a.so"), filepath.Join(dir, "sub", "a-again.so"))
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not ELF\n"), 0o644)
	os.Symlink("a.so", filepath.Join(dir, "link.so"))

	g, err := NewGenerator(Options{}, Resources{})
	if err != nil {
		t.Fatal(err)
	}
	run := func() map[string]Status {
		tree, err := Walk([]string{dir}, WalkOptions{Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		defer tree.Close()
		var mu sync.Mutex
		done, begun := map[int]int{}, map[int]int{}
		statuses := map[string]Status{}
		var order []int
		err = g.ProcessTree(tree, TreeOptions{
			Workers: 2,
			Begin:   func(i int) { mu.Lock(); begun[i]++; mu.Unlock() },
			Done: func(i int, out *Outcome, err error) {
				mu.Lock()
				defer mu.Unlock()
				done[i]++
				if err != nil {
					t.Errorf("%s: %v", tree.Files[i].Path, err)
				}
				rel, _ := filepath.Rel(dir, tree.Files[i].Path)
				statuses[rel] = out.Status
			},
			Ordered: func(i int) {
				mu.Lock()
				defer mu.Unlock()
				if done[i] != 1 {
					t.Errorf("Ordered(%d) before Done", i)
				}
				order = append(order, i)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range tree.Files {
			if done[i] != 1 || (begun[i] == 1) != f.Regular() || begun[i] > 1 {
				t.Errorf("%s: Done %d times, Begin %d times (regular: %v)", f.Path, done[i], begun[i], f.Regular())
			}
			if len(order) <= i || order[i] != i {
				t.Fatalf("Ordered called in the order %v, want the walk's", order)
			}
		}
		return statuses
	}
	first := run()
	want := map[string]Status{"a.so": Patched, "link.so": Skipped, "notes.txt": Skipped, "sub/b.so": Patched, "sub/c.o": Patched}
	if fmt.Sprint(first) != fmt.Sprint(want) {
		t.Errorf("first run: %v, want %v", first, want)
	}
	var a, again syscall.Stat_t
	syscall.Stat(filepath.Join(dir, "a.so"), &a)
	syscall.Stat(filepath.Join(dir, "sub", "a-again.so"), &again)
	if a.Ino != again.Ino {
		t.Errorf("a.so and sub/a-again.so are no longer one file")
	}
	second := run()
	for _, name := range []string{"a.so", "sub/b.so", "sub/c.o"} {
		want[name] = UpToDate
	}
	if fmt.Sprint(second) != fmt.Sprint(want) {
		t.Errorf("second run: %v, want %v", second, want)
	}

	// a.so and sub/a.so land on out/a.so.
	copyTo("direct.so", "sub/a.so")
	_, err = Walk([]string{filepath.Join(dir, "a.so"), filepath.Join(dir, "sub", "a.so")}, WalkOptions{OutputDir: filepath.Join(t.TempDir(), "out")})
	var clash *OutputClashError
	if !errors.As(err, &clash) || clash.Other != filepath.Join(dir, "a.so") {
		t.Errorf("two operands with one output: %v, want an *OutputClashError", err)
	}
}
