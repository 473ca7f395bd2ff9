package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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
		t.Skip("-short")
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
