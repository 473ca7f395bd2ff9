package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestReplaceCopyTool checks testdata/replacecopy, the reference
// testdata/bench-tree.sh times beside the batch form: every regular file
// of the tree replaced by a new file (another inode) with the same bytes
// and mode, symbolic links left as they are, no temporary file left.
func TestReplaceCopyTool(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "replacecopy")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "./testdata/replacecopy")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building replacecopy: %v\n%s", err, out)
	}
	tree := filepath.Join(dir, "tree")
	files := map[string][]byte{
		"a.so":          bytes.Repeat([]byte("abc"), 100000),
		"sub/b":         []byte("b"),
		"sub/empty":     nil,
		"sub/deep/c.so": bytes.Repeat([]byte{0}, 5000),
	}
	modes := map[string]os.FileMode{"a.so": 0o755, "sub/b": 0o640, "sub/empty": 0o600, "sub/deep/c.so": 0o711}
	inodes := map[string]uint64{}
	for name, data := range files {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, modes[name]); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, modes[name]); err != nil {
			t.Fatal(err)
		}
		inodes[name] = inode(t, p)
	}
	if err := os.Symlink("a.so", filepath.Join(tree, "link.so")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-j", "2", tree).CombinedOutput(); err != nil {
		t.Fatalf("replacecopy: %v\n%s", err, out)
	}
	for name, data := range files {
		p := filepath.Join(tree, name)
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) || st.Mode().Perm() != modes[name] {
			t.Errorf("%s: %d bytes, mode %v; want %d bytes unchanged, mode %v", name, len(got), st.Mode().Perm(), len(data), modes[name])
		}
		if inode(t, p) == inodes[name] {
			t.Errorf("%s: still inode %d, not replaced", name, inodes[name])
		}
	}
	if target, err := os.Readlink(filepath.Join(tree, "link.so")); err != nil || target != "a.so" {
		t.Errorf("link.so: %q, %v; want the link to a.so kept", target, err)
	}
	left, _ := filepath.Glob(filepath.Join(tree, "*", ".*"))
	top, _ := filepath.Glob(filepath.Join(tree, ".*"))
	if left = append(left, top...); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// inode returns the inode number of the file at p.
func inode(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}
