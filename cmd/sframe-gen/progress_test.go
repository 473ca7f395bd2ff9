package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProgressLine draws the status line into a buffer standing for a
// terminal: counts, bytes, time left, the current file; messages clear it
// and it is drawn again below them; stop clears it.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	p := &progress{w: &buf, tty: null, files: 4, total: 4 << 20, started: time.Now().Add(-time.Second)}
	p.start("lib/libfoo.so")
	p.finish("lib/libfoo.so", 1<<20)
	p.start("lib/libbar.so")
	p.draw()
	line := buf.String()
	for _, want := range []string{"\r\x1b[K", "1/4 files", "1.0 MiB/4.0 MiB", "3s left", ": lib/libbar.so"} {
		if !strings.Contains(line, want) {
			t.Errorf("status line %q lacks %q", line, want)
		}
	}
	buf.Reset()
	p.print([]byte("sframe-gen: x: broken\n"))
	if got := buf.String(); !strings.HasPrefix(got, "\r\x1b[Ksframe-gen: x: broken\n\r\x1b[K1/4 files") {
		t.Errorf("message not printed over a cleared line, status drawn again: %q", got)
	}
	buf.Reset()
	p.current = strings.Repeat("very/long/path/", 20) + "end.so"
	p.draw()
	if got := buf.String(); len(got) > 80+4 || !strings.HasSuffix(got, "end.so") || !strings.Contains(got, "...") {
		t.Errorf("long path not cut to the terminal's 80 columns: %q", got)
	}

	// Not a terminal: messages only.
	buf.Reset()
	q := newProgress(&buf, false, 4, 100)
	q.start("a")
	q.print([]byte("msg\n"))
	q.stop()
	if buf.String() != "msg\n" {
		t.Errorf("without a terminal: %q", buf.String())
	}
}

// TestProgressTerminal runs the batch form on a pseudo-terminal (script
// from util-linux): the status line appears and is cleared, the summary
// follows; with -q neither.
func TestProgressTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs batches on a pseudo-terminal (runs in make test-long)")
	}
	script := needTool(t, "script")
	dir := t.TempDir()
	bin := filepath.Join(dir, "sframe-gen")
	if out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tree := filepath.Join(dir, "tree")
	os.Mkdir(tree, 0o755)
	for i := range 40 {
		copyFile(t, filepath.Join(testdataDir(), "link/x86_64/tree-sitter.exe"), filepath.Join(tree, string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	run := func(args string) string {
		out, err := exec.Command(script, "-qec", bin+" "+args+" "+tree, os.DevNull).CombinedOutput()
		if err != nil {
			t.Fatalf("script: %v\n%s", err, out)
		}
		return string(out)
	}
	out := run("-j 1")
	if !strings.Contains(out, "/40 files") || !strings.Contains(out, "\r\x1b[K") {
		t.Errorf("no status line on the terminal: %q", out)
	}
	if !strings.Contains(out, "\r\x1b[Ksframe-gen: 40 files: 40 patched") {
		t.Errorf("status line not cleared before the summary: %q", out)
	}
	if out := run("-q"); out != "" {
		t.Errorf("-q printed %q", out)
	}
}

// TestProgressCountsFilesOnly runs the batch form on a pseudo-terminal
// over a tree with symbolic links (sorted before the files, so they are
// done first), a dangling one, a hard link, a FIFO and a subdirectory:
// every status line counts at most the regular files it was given, and
// its total is their number (hard links once).
func TestProgressCountsFilesOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs batches on a pseudo-terminal (runs in make test-long)")
	}
	script := needTool(t, "script")
	bin := buildCommand(t)
	tree := filepath.Join(t.TempDir(), "tree")
	os.MkdirAll(filepath.Join(tree, "sub"), 0o755)
	exe := filepath.Join(testdataDir(), "link/x86_64/tree-sitter.exe")
	var files []string
	for i := range 8 {
		files = append(files, filepath.Join(tree, fmt.Sprintf("f%d", i)))
	}
	files = append(files, filepath.Join(tree, "sub", "g0"), filepath.Join(tree, "sub", "g1"))
	for _, f := range files {
		copyFile(t, exe, f)
	}
	for i := range 20 {
		if err := os.Symlink(files[i%len(files)], filepath.Join(tree, fmt.Sprintf("0link%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("nowhere", filepath.Join(tree, "0dangling")))
	must(os.Link(files[0], filepath.Join(tree, "f0-again")))
	must(syscall.Mkfifo(filepath.Join(tree, "0fifo"), 0o644))

	// -v: every patched file prints a line, and the status line is drawn
	// again below it with the counts of that moment.
	out, err := exec.Command(script, "-qec", bin+" -v -j 1 "+tree, os.DevNull).CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	lines := regexp.MustCompile(`(\d+)/(\d+) files`).FindAllStringSubmatch(string(out), -1)
	if len(lines) < len(files) {
		t.Fatalf("%d status lines, want one after each of the %d files: %q", len(lines), len(files), out)
	}
	for _, m := range lines {
		done, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		if total != len(files) || done > total {
			t.Fatalf("status line %q: want at most %d of %d regular files\n%s", m[0], len(files), len(files), out)
		}
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d files: %d patched", len(files)+22, len(files))) {
		t.Errorf("summary: %q", out)
	}
}
