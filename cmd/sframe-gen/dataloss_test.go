package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// The data-loss suite: whatever happens while sframe-gen writes a file (the
// disk fills up at any step, the process is killed at any moment, another
// process appends to the file), the file holds its old bytes or the new
// ones, never nothing and never a mix, and no set-user-ID copy is left.

// bigELF writes to p a linked program followed by n bytes of padding (not
// holes), long enough for sframe-gen to take a while copying it.
func bigELF(t *testing.T, p string, n int) {
	t.Helper()
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/pie.exe"), p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	block := bytes.Repeat([]byte("sframe-gen padding "), 1<<14)
	for w := 0; w < n; w += len(block) {
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// smallTmpfs mounts a tmpfs of size bytes for t.
func smallTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		sysfiles.NeedInput(t, "mount tmpfs: %v (run the tests as root, as .ci/run does)", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestFullDisk runs sframe-gen on a file in a tmpfs whose free space ends
// at every step of the write (from none to enough), by the rename path and
// the in-place path (a hard link outside the tree): each run either
// succeeds with the new bytes or fails with the old ones, and leaves no
// temporary file.
func TestFullDisk(t *testing.T) {
	sysfiles.NeedRoot(t, "mounts a small tmpfs")
	ref := t.TempDir()
	exe := filepath.Join(ref, "prog")
	bigELF(t, exe, 1<<20)
	old := readFile(t, exe)
	patched := filepath.Join(ref, "patched")
	if _, stderr, code := runCLI("-o", patched, exe); code != 0 {
		t.Fatalf("reference run: %s", stderr)
	}
	want := readFile(t, patched)
	page := int64(os.Getpagesize())
	mnt := smallTmpfs(t, 8<<20)
	for _, inPlace := range []bool{false, true} {
		failures, successes := 0, 0
		// Free space from 0 to a little more than the new file needs,
		// in steps of 16 pages.
		for free := int64(0); free <= int64(len(want))+32*page; free += 16 * page {
			dir := filepath.Join(mnt, "d")
			os.RemoveAll(dir)
			os.Remove(filepath.Join(mnt, "filler"))
			os.Mkdir(dir, 0o755)
			file := filepath.Join(dir, "prog")
			if err := os.WriteFile(file, old, 0o755); err != nil {
				t.Fatal(err)
			}
			if inPlace {
				os.Link(file, filepath.Join(mnt, "other-name"))
			}
			fillTo(t, mnt, free)
			_, stderr, code := runCLI(file)
			got := readFile(t, file)
			switch {
			case code == 0 && bytes.Equal(got, want):
				successes++
			case code != 0 && bytes.Equal(got, old):
				failures++
				if !strings.Contains(stderr, "space") {
					t.Errorf("free %d: the failure does not say the disk is full: %s", free, stderr)
				}
			default:
				t.Fatalf("in place %v, free %d bytes: exit %d and the file is neither the old nor the new one (%d bytes)\n%s", inPlace, free, code, len(got), stderr)
			}
			leftTemps(t, dir)
			os.Remove(filepath.Join(mnt, "other-name"))
		}
		t.Logf("in place %v: %d runs failed cleanly on a full disk, %d succeeded", inPlace, failures, successes)
		if failures == 0 || successes == 0 {
			t.Errorf("in place %v: %d failures, %d successes: the free space did not cross the need", inPlace, failures, successes)
		}
	}
}

// fillTo fills the file system of dir until free bytes are left.
func fillTo(t *testing.T, dir string, free int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * int64(st.Bsize)
	if avail <= free {
		return
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, avail-free); err != nil {
		t.Fatal(err)
	}
}

// TestKilled kills sframe-gen (SIGKILL, no chance to clean up) at random
// moments while it patches a set-user-ID program in place: the program is
// always the old or the new one, and no other file (no set-user-ID copy)
// is left in its directory.
func TestKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills 30 runs on a 64 MiB program (runs in make test-long)")
	}
	sysfiles.NeedRoot(t, "mounts a small tmpfs")
	bin := buildCommand(t)
	ref := t.TempDir()
	exe := filepath.Join(ref, "prog")
	bigELF(t, exe, 64<<20)
	old := readFile(t, exe)
	patched := filepath.Join(ref, "patched")
	if out, err := exec.Command(bin, "-o", patched, exe).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	want := readFile(t, patched)
	start := time.Now()
	if err := exec.Command(bin, "-o", filepath.Join(ref, "timed"), exe).Run(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	dir := t.TempDir()
	file := filepath.Join(dir, "prog")
	kills, completed := 0, 0
	for i := range 30 {
		if err := os.WriteFile(file, old, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(file, 0o755|os.ModeSetuid)
		cmd := exec.Command(bin, file)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(took) * 2)))
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err == nil {
			completed++
		} else {
			kills++
		}
		got := readFile(t, file)
		if !bytes.Equal(got, old) && !bytes.Equal(got, want) {
			t.Fatalf("kill %d: the file is neither the old nor the new one (%d bytes)", i, len(got))
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Fatalf("kill %d: %d entries left in the directory, want only the program", i, len(ents))
		}
		if st, _ := os.Stat(file); st.Mode()&os.ModeSetuid == 0 {
			t.Fatalf("kill %d: the program lost its set-user-ID bit", i)
		}
	}
	t.Logf("%d runs killed, %d completed before the kill (one run takes %v)", kills, completed, took)
	if kills == 0 {
		t.Errorf("no run was killed")
	}
}

// TestConcurrentWriter appends to a file while sframe-gen patches it:
// sframe-gen must notice and leave the file, with what was appended,
// alone. (Stopped before it took the file's size, it reads the line with
// the file, which it then keeps.) sframe-gen checks the file just before
// it renames the new one over it: a line appended after that check (a
// writer that came too late) is beyond what it can see. The writer stops sframe-gen once it has the
// file open, and a run where it had already named its new file (the
// check done) or replaced the file is made again, up to 5 times.
func TestConcurrentWriter(t *testing.T) {
	bin := buildCommand(t)
	for attempt := 1; ; attempt++ {
		if !concurrentWriter(t, bin) {
			return
		}
		t.Logf("attempt %d: the writer came after sframe-gen's check", attempt)
		if attempt == 5 {
			t.Fatal("in 5 runs the writer never came before sframe-gen's check")
		}
	}
}

// concurrentWriter is one run of TestConcurrentWriter; it reports whether
// the writer came too late to be seen.
func concurrentWriter(t *testing.T, bin string) (late bool) {
	dir := t.TempDir()
	file := filepath.Join(dir, "prog")
	bigELF(t, file, 64<<20)
	old := readFile(t, file)
	var before syscall.Stat_t
	if err := syscall.Stat(file, &before); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once sframe-gen has the file open, stop it, and a writer appends a
	// line.
	for deadline := time.Now().Add(time.Minute); !hasOpen(cmd.Process.Pid, file); {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("sframe-gen did not open the file")
		}
		time.Sleep(100 * time.Microsecond)
	}
	cmd.Process.Signal(syscall.SIGSTOP)
	for !stopped(cmd.Process.Pid) {
		time.Sleep(100 * time.Microsecond)
	}
	var now syscall.Stat_t
	ents, _ := os.ReadDir(dir)
	late = len(ents) != 1 || syscall.Stat(file, &now) != nil || now.Ino != before.Ino
	appended := []byte("a line a logger appended\n")
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(appended)
	f.Close()
	cmd.Process.Signal(syscall.SIGCONT)
	err = cmd.Wait()
	if late {
		return true
	}
	got := readFile(t, file)
	if err == nil {
		// Stopped before it took the file's size: the line was part of
		// the file read, and is in the patched file as sframe-gen
		// patches the file with it.
		with := filepath.Join(t.TempDir(), "with")
		if err := os.WriteFile(with, append(old, appended...), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "-o", with+".out", with).CombinedOutput(); err != nil {
			t.Fatalf("patching the file with the line: %v\n%s", err, out)
		}
		if !bytes.Equal(got, readFile(t, with+".out")) {
			t.Fatalf("the run succeeded, but its file (%d bytes) is not the file with the appended line patched: the line is lost", len(got))
		}
		t.Logf("sframe-gen read the file with the line (stopped before it took the file's size)")
		leftTemps(t, dir)
		return false
	}
	if !bytes.Equal(got, append(old, appended...)) {
		t.Fatalf("the appended data is lost (exit %v, %d bytes, want %d)\n%s", err, len(got), len(old)+len(appended), stderr.String())
	}
	if err == nil || !strings.Contains(stderr.String(), "changed while sframe-gen read it") {
		t.Errorf("exit %v, stderr %q: want a failure saying the file changed", err, stderr.String())
	}
	leftTemps(t, dir)
	return false
}

// stopped reports whether process pid is stopped (by a signal).
func stopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // gone: nothing to wait for
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'T'
}

// hasOpen reports whether process pid has the file path open.
func hasOpen(pid int, path string) bool {
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(fds)
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestObjectTrailerKept: the bytes after everything an object's headers
// describe (a kernel module's appended signature) are kept at the end of
// the patched object, in both forms, a second run writes nothing, and a
// signed module gets a warning that its signature no longer matches.
func TestObjectTrailerKept(t *testing.T) {
	dir := t.TempDir()
	obj := filepath.Join(testdataDir(), "link/x86_64/demo.pic.o")
	for _, c := range []struct {
		name, trailer string
		warn          bool
	}{
		{"padding", "\x00\x00\x00\x00some bytes no header describes", false},
		{"signed module", "PKCS#7 signature bytes\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x7e" + "~Module signature appended~\n", true},
	} {
		for _, form := range [][]string{{"-o", filepath.Join(dir, "out.o")}, {"-q", "-j", "1"}} {
			in := filepath.Join(dir, "in.o")
			data := append(readFile(t, obj), c.trailer...)
			if err := os.WriteFile(in, data, 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{}, form...), in)
			_, stderr, code := runCLI(args...)
			if code != 0 {
				t.Fatalf("%s %v: exit %d %s", c.name, form, code, stderr)
			}
			out := in
			if form[0] == "-o" {
				out = form[1]
			}
			got := readFile(t, out)
			if bytes.Equal(got, data) || !bytes.HasSuffix(got, []byte(c.trailer)) {
				t.Errorf("%s %v: not patched, or the trailer lost", c.name, form)
			}
			if warned := strings.Contains(stderr, "module signature appended to it no longer matches"); warned != c.warn {
				t.Errorf("%s %v: warning %v, want %v: %q", c.name, form, warned, c.warn, stderr)
			}
			again := filepath.Join(dir, "again.o")
			if _, stderr, code := runCLI("-o", again, out); code != 0 || !bytes.Equal(readFile(t, again), got) {
				t.Errorf("%s %v: a second run changes the object (exit %d %s)", c.name, form, code, stderr)
			}
		}
	}
}
