package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// treeEntry is one regular file of the batch test tree and the status the
// batch must give it.
type treeEntry struct {
	rel, status string
}

// buildTree makes the mixed tree of the batch tests under dir: linked
// files and objects of x86-64, AArch64 (both byte orders) and s390x from
// the committed goldens, programs freshly built by gcc and the cross
// compilers, a static archive made by ar, files that are not ELF, symbolic
// and hard links, a read-only file, a damaged ELF, an object without CFI,
// a 32-bit ELF, a FIFO and a file already patched. It returns the regular
// files (first names of hard links) with their expected statuses.
func buildTree(t *testing.T, dir string) []treeEntry {
	t.Helper()
	td := testdataDir()
	var want []treeEntry
	put := func(rel, from, status string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(td, from), p)
		want = append(want, treeEntry{rel, status})
	}
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		put(arch+"/bin/pie", "link/"+arch+"/pie.exe", "patched")
		put(arch+"/bin/nopie", "link/"+arch+"/nopie.exe", "patched")
		put(arch+"/lib/libdemo.so", "link/"+arch+"/lazy.so", "patched")
		put(arch+"/obj/demo.o", "link/"+arch+"/demo.pic.o", "patched")
		os.Symlink("libdemo.so", filepath.Join(dir, arch, "lib", "libdemo.so.1"))
	}
	put("aarch64_be/obj/basic.o", "gas/aarch64_be/basic.o", "patched")
	put("aarch64_be/obj/drap.o", "cc/aarch64/O2-be/drap.o", "patched")
	put("x86_64/obj/nocfi.o", "gas/x86_64/nocfi.o", "no-cfi")

	// Programs built now, by the compilers of the machine.
	for _, cc := range []struct{ arch, gcc string }{{"x86_64", "gcc"}, {"aarch64", "aarch64-linux-gnu-gcc"}, {"s390x", "s390x-linux-gnu-gcc"}} {
		gcc := sysfiles.NeedProgram(t, cc.gcc)
		out := filepath.Join(dir, cc.arch, "bin", "fresh")
		if msg, err := exec.Command(gcc, "-O2", "-o", out, filepath.Join(td, "link/src/main.c")).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cc.gcc, err, msg)
		}
		want = append(want, treeEntry{cc.arch + "/bin/fresh", "patched"})
	}

	// A static archive: two objects (one with a long name), a text member.
	ar := sysfiles.NeedProgram(t, "ar")
	arDir := t.TempDir()
	var members []string
	for name, from := range map[string]string{"demo.o": "link/x86_64/demo.pic.o", "drap_with_a_long_member_name.o": "cc/x86_64/O2/drap.o"} {
		copyFile(t, filepath.Join(td, from), filepath.Join(arDir, name))
		members = append(members, filepath.Join(arDir, name))
	}
	os.WriteFile(filepath.Join(arDir, "README"), []byte("odd"), 0o644)
	sort.Strings(members)
	members = append(members, filepath.Join(arDir, "README"))
	if msg, err := exec.Command(ar, append([]string{"rcsD", filepath.Join(dir, "x86_64/lib/libdemo.a")}, members...)...).CombinedOutput(); err != nil {
		t.Fatalf("ar: %v\n%s", err, msg)
	}
	want = append(want, treeEntry{"x86_64/lib/libdemo.a", "patched"})
	s390Obj := filepath.Join(arDir, "s390x", "demo.o")
	os.Mkdir(filepath.Dir(s390Obj), 0o755)
	copyFile(t, filepath.Join(td, "link/s390x/demo.pic.o"), s390Obj)
	if msg, err := exec.Command(ar, "rcsD", filepath.Join(dir, "s390x/lib/libdemo.a"), s390Obj).CombinedOutput(); err != nil {
		t.Fatalf("ar: %v\n%s", err, msg)
	}
	want = append(want, treeEntry{"s390x/lib/libdemo.a", "patched"})

	// Not ELF, or not for us.
	write := func(rel, data string, mode fs.FileMode, status string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		want = append(want, treeEntry{rel, status})
	}
	write("share/README", "text\n", 0o644, "skipped")
	write("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755, "skipped")
	write("share/empty", "", 0o644, "skipped")
	// An ELF32 header of an i386 executable: SFrame has no 32-bit ABI.
	elf32 := make([]byte, 52)
	copy(elf32, "\x7fELF\x01\x01\x01")
	elf32[16], elf32[18], elf32[20], elf32[40] = 2, 3, 1, 52
	write("x86_64/bin/i386", string(elf32), 0o755, "skipped")
	pie, _ := os.ReadFile(filepath.Join(td, "link/x86_64/pie.exe"))
	write("x86_64/lib/damaged.so", string(pie[:200]), 0o755, "failed")
	if err := syscall.Mkfifo(filepath.Join(dir, "share/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("nowhere", filepath.Join(dir, "share/dangling"))
	os.Symlink("..", filepath.Join(dir, "share/loop"))

	// Already patched by a run on one file: up to date.
	p := filepath.Join(dir, "x86_64/lib/libdone.so")
	if _, stderr, code := runCLI("-o", p, filepath.Join(td, "link/x86_64/now.so")); code != 0 {
		t.Fatalf("patching libdone.so: %s", stderr)
	}
	want = append(want, treeEntry{"x86_64/lib/libdone.so", "up-to-date"})

	// A hard link (its first name is in the list) and a read-only file.
	if err := os.Link(filepath.Join(dir, "x86_64/bin/pie"), filepath.Join(dir, "x86_64/bin/pie-again")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "s390x/bin/nopie"), 0o555); err != nil {
		t.Fatal(err)
	}
	sort.Slice(want, func(i, j int) bool { return want[i].rel < want[j].rel })
	return want
}

// readReport parses a --report file.
func readReport(t *testing.T, path string) []reportLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []reportLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l reportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("report line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

// fileState is what a second run must not change.
type fileState struct {
	ino   uint64
	mtime int64
	mode  fs.FileMode
	data  string
	link  string
}

// treeState records every path under dir.
func treeState(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		s := st.Sys().(*syscall.Stat_t)
		fsx := fileState{ino: s.Ino, mtime: st.ModTime().UnixNano(), mode: st.Mode()}
		switch {
		case st.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			fsx.data = string(b)
		case st.Mode()&fs.ModeSymlink != 0:
			fsx.link, _ = os.Readlink(p)
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fsx
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// inDir runs the CLI in process with dir as the working directory.
func inDir(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	return runCLI(args...)
}

// TestBatchTree runs the batch form over the mixed tree and checks every
// outcome: the statuses, the one failure line, the files patched exactly
// as one-by-one runs patch them, links and modes kept, the patched
// programs still running (qemu-user for the cross ones), a second run
// rewriting nothing, and -j 1 giving what -j 4 gives.
func TestBatchTree(t *testing.T) {
	orig := t.TempDir()
	want := buildTree(t, orig)
	pristine := treeState(t, orig)
	tree := func() string {
		d := filepath.Join(t.TempDir(), "tree")
		if out, err := exec.Command("cp", "-a", orig, d).CombinedOutput(); err != nil {
			t.Fatalf("cp -a: %v\n%s", err, out)
		}
		return d
	}

	dir := tree()
	rep := filepath.Join(t.TempDir(), "report.jsonl")
	_, stderr, code := inDir(t, dir, "-j", "4", "--report", rep, ".")
	if code != exitFailure {
		t.Errorf("exit %d, want 1 (a damaged file)", code)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "sframe-gen: x86_64/lib/damaged.so: ") ||
		!strings.Contains(lines[1], "19 patched, 1 up to date, 1 without CFI, 10 skipped, 1 failed") {
		t.Errorf("stderr:\n%s\nwant the damaged file's line and the summary", stderr)
	}
	got := map[string]reportLine{}
	for _, l := range readReport(t, rep) {
		got[l.File] = l
	}
	for _, w := range want {
		if got[w.rel].Status != w.status {
			t.Errorf("%s: status %q (%s), want %q", w.rel, got[w.rel].Status, got[w.rel].Reason, w.status)
		}
	}
	for rel, status := range map[string]string{"share/fifo": "skipped", "share/dangling": "skipped", "x86_64/lib/libdemo.so.1": "skipped"} {
		if got[rel].Status != status {
			t.Errorf("%s: status %q, want %q", rel, got[rel].Status, status)
		}
	}
	if l := got["x86_64/bin/pie"]; len(l.Links) != 1 || l.Links[0] != "x86_64/bin/pie-again" {
		t.Errorf("x86_64/bin/pie: links %v", l.Links)
	}
	if _, ok := got["x86_64/bin/pie-again"]; ok {
		t.Errorf("the hard link was reported (processed) on its own")
	}

	after := treeState(t, dir)
	for _, w := range want {
		before, now := pristine[w.rel], after[w.rel]
		if now.mode != before.mode {
			t.Errorf("%s: mode %v, was %v", w.rel, now.mode, before.mode)
		}
		if (now.data != before.data) != (w.status == "patched") {
			t.Errorf("%s (%s): changed %v", w.rel, w.status, now.data != before.data)
		}
		if w.status != "patched" {
			continue
		}
		// What a run on this file alone writes.
		one := filepath.Join(t.TempDir(), "one")
		if _, stderr, code := runCLI("-o", one, filepath.Join(orig, w.rel)); code != 0 {
			t.Fatalf("%s alone: %s", w.rel, stderr)
		}
		if b, _ := os.ReadFile(one); string(b) != now.data {
			t.Errorf("%s: the batch wrote other bytes than a run on the file alone", w.rel)
		}
	}
	if after["x86_64/bin/pie-again"].ino != after["x86_64/bin/pie"].ino {
		t.Errorf("hard links are no longer one file")
	}
	for rel, s := range pristine {
		if s.link != "" && after[rel].link != s.link {
			t.Errorf("symbolic link %s: %q, was %q", rel, after[rel].link, s.link)
		}
	}
	for rel := range after {
		if strings.Contains(rel, ".sframe-gen-") {
			t.Errorf("temporary file %s left", rel)
		}
	}
	runPrograms(t, orig, dir)
	for _, arch := range []string{"x86_64", "s390x"} {
		if msg, err := exec.Command(sysfiles.NeedProgram(t, "nm"), "-s", filepath.Join(dir, arch, "lib/libdemo.a")).CombinedOutput(); err != nil || !bytes.Contains(msg, []byte("demo_fib in demo.o")) {
			t.Errorf("nm -s on the patched %s archive: %v\n%s", arch, err, msg)
		}
	}
	linkArchive(t, orig, dir)

	// A second run rewrites nothing.
	rep2 := filepath.Join(t.TempDir(), "report2.jsonl")
	if _, stderr, code = inDir(t, dir, "--report", rep2, "."); code != exitFailure {
		t.Errorf("second run: exit %d: %s", code, stderr)
	}
	for _, l := range readReport(t, rep2) {
		if l.Status == "patched" {
			t.Errorf("second run patched %s", l.File)
		}
	}
	again := treeState(t, dir)
	for rel, s := range after {
		if again[rel] != s {
			t.Errorf("second run changed %s", rel)
		}
	}

	// -j 1 and -j 4: the same files, messages and report.
	d1, d4 := tree(), tree()
	r1, r4 := filepath.Join(t.TempDir(), "r1"), filepath.Join(t.TempDir(), "r4")
	_, e1, c1 := inDir(t, d1, "-j", "1", "--report", r1, ".")
	_, e4, c4 := inDir(t, d4, "-j", "4", "--report", r4, ".")
	if e1 != e4 || c1 != c4 {
		t.Errorf("-j 1: exit %d\n%s\n-j 4: exit %d\n%s", c1, e1, c4, e4)
	}
	if a, b := mustRead(t, r1), mustRead(t, r4); a != b {
		t.Errorf("-j 1 and -j 4 reports differ")
	}
	s1, s4 := treeState(t, d1), treeState(t, d4)
	for rel, s := range s1 {
		if s.data != s4[rel].data || s.link != s4[rel].link {
			t.Errorf("%s: -j 1 and -j 4 differ", rel)
		}
	}
}

// linkArchive links the demo program against the archives of the
// original tree and of the patched one, with the machine's gcc and ld (and
// for x86-64 the reference GNU ld too, 2.46+, which merges SFrame v3), and
// runs them (s390x under qemu-user): the same output, and the reference ld
// merged the members' .sframe into the program's.
func linkArchive(t *testing.T, orig, patched string) {
	refGCC := sysfiles.GNURef.GCC(t, "x86_64")
	sysfiles.NeedProgram(t, filepath.Join(refGCC, "ld"))
	for _, arch := range []struct{ name, gcc, qemu string }{{"x86_64", "gcc", ""}, {"s390x", "s390x-linux-gnu-gcc", "qemu-s390x"}} {
		gcc := sysfiles.NeedProgram(t, arch.gcc)
		var outs []string
		for _, root := range []string{orig, patched} {
			flags := [][]string{nil}
			if arch.name == "x86_64" {
				flags = append(flags, []string{"-B", refGCC})
			}
			for _, b := range flags {
				exe := filepath.Join(t.TempDir(), "prog")
				args := append(append([]string{}, b...), "-o", exe, filepath.Join(testdataDir(), "link", arch.name, "main.pie.o"), filepath.Join(root, arch.name, "lib/libdemo.a"))
				if msg, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
					t.Fatalf("%s %q: %v\n%s", arch.gcc, args, err, msg)
				}
				run := exec.Command(exe, "3")
				if arch.qemu != "" {
					run = exec.Command(sysfiles.NeedProgram(t, arch.qemu), "-L", qemuPrefix(t, arch.name), exe, "3")
				}
				out, err := run.CombinedOutput()
				if err != nil {
					t.Errorf("%s program linked against the archive: %v\n%s", arch.name, err, out)
				}
				outs = append(outs, string(out))
				if root == patched && b != nil {
					dump, stderr, code := runCLI("dump", exe)
					if code != 0 || !strings.Contains(dump, "Num FDEs") {
						t.Errorf("the program linked by GNU ld against the patched archive has no .sframe: %s", stderr)
					}
				}
			}
		}
		for _, o := range outs[1:] {
			if outs[0] == "" || o != outs[0] {
				t.Errorf("%s programs linked against the archives print %q", arch.name, outs)
				break
			}
		}
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runPrograms runs every patched program of the tree against its patched
// library (natively or under qemu-user) and compares the output with the
// unpatched program's against the unpatched library.
func runPrograms(t *testing.T, orig, patched string) {
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		var runner []string
		if arch != "x86_64" || runtime.GOARCH != "amd64" {
			runner = []string{sysfiles.NeedProgram(t, "qemu-"+arch), "-L", qemuPrefix(t, arch)}
		}
		run := func(root, exe string) string {
			lib := filepath.Join(root, arch, "lib")
			args := append(append([]string{}, runner...), filepath.Join(root, arch, "bin", exe), "3")
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
			if len(runner) > 0 {
				cmd.Args = append([]string{args[0], "-E", "LD_LIBRARY_PATH=" + lib}, args[1:]...)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s/%s: %v\n%s", arch, exe, err, out)
			}
			return string(out)
		}
		for _, exe := range []string{"pie", "nopie", "fresh"} {
			w, g := run(orig, exe), run(patched, exe)
			if w == "" || g != w {
				t.Errorf("%s/bin/%s: patched output %q, unpatched %q", arch, exe, g, w)
			}
		}
	}
}

// TestBatchOutputDir: --output-dir mirrors the tree (files patched or
// copied, symbolic and hard links made again) and leaves the input as it
// is; -p keeps the times; usage errors.
func TestBatchOutputDir(t *testing.T) {
	in := t.TempDir()
	td := testdataDir()
	os.MkdirAll(filepath.Join(in, "lib"), 0o755)
	copyFile(t, filepath.Join(td, "link/x86_64/lazy.so"), filepath.Join(in, "lib/libdemo.so"))
	copyFile(t, filepath.Join(td, "gas/x86_64/nocfi.o"), filepath.Join(in, "nocfi.o"))
	os.WriteFile(filepath.Join(in, "README"), []byte("text"), 0o640)
	os.Symlink("libdemo.so", filepath.Join(in, "lib/libdemo.so.1"))
	os.Link(filepath.Join(in, "lib/libdemo.so"), filepath.Join(in, "lib/hard.so"))
	before := treeState(t, in)
	out := filepath.Join(t.TempDir(), "out")
	if _, stderr, code := runCLI("-q", "-p", "--output-dir", out, in); code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if after := treeState(t, in); len(after) != len(before) {
		t.Errorf("the input tree changed")
	} else {
		for rel, s := range before {
			if after[rel] != s {
				t.Errorf("input %s changed", rel)
			}
		}
	}
	got := treeState(t, out)
	one := filepath.Join(t.TempDir(), "one.so")
	runCLI("-o", one, filepath.Join(in, "lib/libdemo.so"))
	if got["lib/libdemo.so"].data != mustRead(t, one) {
		t.Errorf("lib/libdemo.so: not what a run on the file writes")
	}
	if got["lib/hard.so"].ino != got["lib/libdemo.so"].ino {
		t.Errorf("the hard link is not one file in the output")
	}
	if got["lib/libdemo.so.1"].link != "libdemo.so" {
		t.Errorf("symbolic link not made again: %+v", got["lib/libdemo.so.1"])
	}
	for _, rel := range []string{"README", "nocfi.o"} {
		if got[rel].data != before[rel].data || got[rel].mode != before[rel].mode {
			t.Errorf("%s not copied as it is", rel)
		}
	}
	for _, rel := range []string{"README", "lib/libdemo.so"} {
		if got[rel].mtime != before[rel].mtime {
			t.Errorf("%s: -p did not keep the time", rel)
		}
	}

	for _, args := range [][]string{
		{"-o", "x", in, in},
		{"-o", "x", in},
		{"--raw", in},
		{"-j", "0", in},
		{"--output-dir", in, in},
	} {
		if _, _, code := runCLI(args...); code != exitUsage {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

var time1 = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// TestBatchPreserveDates: in place, -p keeps a patched file's times, and
// without it the time moves.
func TestBatchPreserveDates(t *testing.T) {
	atime1 := time1.Add(-time.Hour)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.so"), filepath.Join(dir, "b.so")
	for _, p := range []string{a, b} {
		copyFile(t, filepath.Join(testdataDir(), "link/x86_64/lazy.so"), p)
		os.Chtimes(p, atime1, time1)
	}
	if _, stderr, code := runCLI("-q", "-p", a); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := runCLI("-q", "-j", "2", "-p", b); code != 0 {
		t.Fatal(stderr)
	}
	for _, p := range []string{a, b} {
		st, _ := os.Stat(p)
		if !st.ModTime().Equal(time1) {
			t.Errorf("%s: mtime %v, want %v", p, st.ModTime(), time1)
		}
		// The access time from before sframe-gen read the file (which
		// moves it: relatime moves an access time older than the
		// modification time).
		if at := timespec(st.Sys().(*syscall.Stat_t).Atim); !at.Equal(atime1) {
			t.Errorf("%s: atime %v, want %v", p, at, atime1)
		}
	}
	rep := filepath.Join(dir, "report")
	if _, stderr, code := runCLI("-j", "2", "--report", rep, a, a, dir); code != exitOK {
		t.Errorf("the same file three times: exit %d %s", code, stderr)
	}
	if n := len(readReport(t, rep)); n != 2 {
		t.Errorf("the same file three times: %d lines in the report, want 2 (a.so, b.so)", n)
	}
}

// TestSingleFileUpToDate: with one FILE too, a file whose SFrame is
// already what would be written is left untouched (same inode and time).
func TestSingleFileUpToDate(t *testing.T) {
	dir := t.TempDir()
	for _, from := range []string{"link/x86_64/lazy.so", "link/s390x/pie.exe", "link/aarch64/demo.pic.o", "gas/aarch64_be/basic.o"} {
		p := filepath.Join(dir, filepath.Base(from))
		copyFile(t, filepath.Join(testdataDir(), from), p)
		if _, stderr, code := runCLI(p); code != 0 {
			t.Fatalf("%s: %s", from, stderr)
		}
		os.Chtimes(p, time1, time1)
		before := treeState(t, dir)[filepath.Base(from)]
		if _, stderr, code := runCLI(p); code != 0 {
			t.Fatalf("%s again: %s", from, stderr)
		}
		if after := treeState(t, dir)[filepath.Base(from)]; after != before {
			t.Errorf("%s: rewritten by a second run", from)
		}
	}
}

// TestBatchArch: --arch applies to each file: files of another
// architecture (or without an SFrame ABI) fail, the others are patched.
func TestBatchArch(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/pie.exe"), filepath.Join(dir, "a-x86"))
	copyFile(t, filepath.Join(testdataDir(), "link/s390x/pie.exe"), filepath.Join(dir, "b-s390x"))
	copyFile(t, filepath.Join(testdataDir(), "gas/aarch64_be/basic.o"), filepath.Join(dir, "c-be.o"))
	os.WriteFile(filepath.Join(dir, "d-text"), []byte("text"), 0o644)
	_, stderr, code := inDir(t, dir, "--arch", "s390x", ".")
	want := "sframe-gen: a-x86: file is for x86_64, not s390x (--arch)\n" +
		"sframe-gen: c-be.o: file is for aarch64_be, not s390x (--arch)\n" +
		"sframe-gen: 4 files: 1 patched, 0 up to date, 0 without CFI, 1 skipped, 2 failed; 5 functions covered\n"
	if code != exitFailure || stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, stderr, want)
	}
}

// TestBatchSymlinkOperands: a PATH that is a symbolic link is followed (as
// find -H): to a file, the file is patched and the link kept; to a
// directory, it is walked; links inside are not followed.
func TestBatchSymlinkOperands(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/lazy.so"), filepath.Join(dir, "real/libdemo.so.1"))
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/pie.exe"), filepath.Join(dir, "prog"))
	os.Symlink("real", filepath.Join(dir, "lib"))
	os.Symlink("prog", filepath.Join(dir, "prog-link"))
	os.Symlink("libdemo.so.1", filepath.Join(dir, "real/libdemo.so"))
	rep := filepath.Join(t.TempDir(), "r")
	if _, stderr, code := inDir(t, dir, "--report", rep, "lib", "prog-link"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, l := range readReport(t, rep) {
		got = append(got, l.File+" "+l.Status)
	}
	want := "lib/libdemo.so skipped,lib/libdemo.so.1 patched,prog-link patched"
	if strings.Join(got, ",") != want {
		t.Errorf("report %q, want %q", strings.Join(got, ","), want)
	}
	st := treeState(t, dir)
	if st["prog-link"].link != "prog" || st["lib"].link != "real" || st["real/libdemo.so"].link != "libdemo.so.1" {
		t.Errorf("links not kept: %+v", st)
	}
	if st["prog"].data == mustRead(t, filepath.Join(testdataDir(), "link/x86_64/pie.exe")) {
		t.Errorf("the link's target was not patched")
	}
}

// timespec converts a stat time.
func timespec(ts syscall.Timespec) time.Time { return time.Unix(ts.Unix()) }

// TestBatchClosesInputs: the library's batch (Generator.ProcessTree)
// closes the input files on closers of its own, and every file is
// closed once the batch returns: no descriptor is left open.
func TestBatchClosesInputs(t *testing.T) {
	dir := t.TempDir()
	for i, name := range []string{"pie.exe", "lazy.so", "now.so", "gc.exe"} {
		data, err := os.ReadFile(filepath.Join(testdataDir(), "link/x86_64", name))
		if err != nil {
			t.Fatal(err)
		}
		for k := range 8 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%d-%s", i, k, name)), data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A first batch, on another tree, makes what the process keeps open
	// once started (the runtime's poller).
	warm := t.TempDir()
	if err := os.WriteFile(filepath.Join(warm, "f"), []byte("not ELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI("-q", warm)
	before := openFiles(t)
	if _, stderr, code := runCLI("-q", "-j", "2", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if after := openFiles(t); after > before {
		t.Errorf("%d descriptors open after the batch, %d before", after, before)
	}
	// A second run finds every file patched: the closer closed files
	// that had been written, not before.
	stdout, stderr, code := runCLI("-j", "2", "--report", "-", dir)
	if code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, `"up-to-date"`); n != 32 {
		t.Errorf("second run: %d files up to date, want 32:\n%s", n, stdout)
	}
}

// openFiles counts the test process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// TestSummaryLine checks the batch's summary line, one file or function
// named in the singular.
func TestSummaryLine(t *testing.T) {
	one := summary{fdes: 1}
	one.counts[statusPatched] = 1
	var many summary
	many.counts[statusPatched], many.counts[statusFailed], many.fdes = 2, 1, 319
	for _, tc := range []struct {
		s    summary
		want string
	}{
		{summary{}, "0 files: 0 patched, 0 up to date, 0 without CFI, 0 skipped, 0 failed; 0 functions covered"},
		{one, "1 file: 1 patched, 0 up to date, 0 without CFI, 0 skipped, 0 failed; 1 function covered"},
		{many, "3 files: 2 patched, 0 up to date, 0 without CFI, 0 skipped, 1 failed; 319 functions covered"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
