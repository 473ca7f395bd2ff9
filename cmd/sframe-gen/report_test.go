package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReportTargets checks where --report writes: standard output ("-",
// /dev/stdout), an inherited descriptor (/dev/fd/N: a pipe, as a process
// substitution gives), a named pipe, a regular file (replaced); and that
// a target that cannot be written fails the run before any file is
// patched.
func TestReportTargets(t *testing.T) {
	src := filepath.Join(testdataDir(), "link", "x86_64", "pie.exe")
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// tree returns a new directory holding an unpatched copy of src.
	tree := func(t *testing.T) (dir, file string) {
		dir = t.TempDir()
		file = filepath.Join(dir, "pie.exe")
		if err := os.WriteFile(file, orig, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir, file
	}
	const line = `{"file":"%s","status":"patched"`
	t.Run("stdout", func(t *testing.T) {
		for _, target := range []string{"-", "/dev/stdout"} {
			dir, file := tree(t)
			stdout, stderr, code := runCLI("-q", "--report", target, dir)
			if code != exitOK || !strings.HasPrefix(stdout, fmt.Sprintf(line, file)) {
				t.Errorf("--report %s: exit %d, stdout %q, stderr %q", target, code, stdout, stderr)
			}
		}
	})
	t.Run("inherited descriptor", func(t *testing.T) {
		dir, file := tree(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		target := fmt.Sprintf("/dev/fd/%d", w.Fd())
		_, stderr, code := runCLI("-q", "--report", target, dir)
		w.Close()
		got, _ := io.ReadAll(r)
		if code != exitOK || !bytes.HasPrefix(got, fmt.Appendf(nil, line, file)) {
			t.Errorf("--report %s: exit %d, read %q, stderr %q", target, code, got, stderr)
		}
	})
	t.Run("named pipe", func(t *testing.T) {
		dir, file := tree(t)
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		read := make(chan []byte)
		go func() {
			b, _ := os.ReadFile(fifo)
			read <- b
		}()
		_, stderr, code := runCLI("-q", "--report", fifo, dir)
		// A run that did not open the pipe leaves the reader waiting for
		// a writer: this one, which writes nothing, lets it end.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		if got := <-read; code != exitOK || !bytes.HasPrefix(got, fmt.Appendf(nil, line, file)) {
			t.Errorf("--report FIFO: exit %d, read %q, stderr %q", code, got, stderr)
		}
	})
	t.Run("regular file", func(t *testing.T) {
		dir, file := tree(t)
		rep := filepath.Join(t.TempDir(), "report.jsonl")
		if err := os.WriteFile(rep, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCLI("-q", "--report", rep, dir)
		got, _ := os.ReadFile(rep)
		if code != exitOK || !bytes.HasPrefix(got, fmt.Appendf(nil, line, file)) {
			t.Errorf("--report FILE: exit %d, file %q, stderr %q", code, got, stderr)
		}
	})
	for _, tc := range []struct {
		name, target, stderr string
	}{
		{"missing directory", "/nonexistent/report.jsonl", "--report: cannot write in /nonexistent: no such file or directory"},
		{"a directory", "", "--report: is a directory"},
		{"descriptor not open", "/dev/fd/999", "--report: descriptor 999: bad file descriptor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, file := tree(t)
			target := tc.target
			if target == "" {
				target = t.TempDir()
			}
			_, stderr, code := runCLI("-q", "--report", target, dir)
			if code != exitFailure || stderr != "sframe-gen: "+target+": "+tc.stderr+"\n" {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, tc.stderr)
			}
			if after, _ := os.ReadFile(file); !bytes.Equal(after, orig) {
				t.Errorf("%s was patched before the report's target was refused", file)
			}
		})
	}
}
