package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSpecialInputs runs every command on inputs that are not ELF files or
// not regular files, and generate on outputs it cannot write: each must fail
// at once with status 1 (verify: 2, "cannot be checked") and one line
// saying what is wrong.
func TestSpecialInputs(t *testing.T) {
	dir := t.TempDir()
	elfData, err := os.ReadFile(filepath.Join(testdataDir(), "link/x86_64/pie.exe"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := layoutOf(elfData)
	if err != nil {
		t.Fatal(err)
	}
	// A section (.text) running past the end of the file: elfpatch's
	// complaint is about the input, not "writing OUT".
	pastEOF := append([]byte(nil), elfData...)
	pastEOF = l.putShdr(pastEOF, l.index(".text"), shSize, uint64(len(elfData)))

	for _, tc := range []struct {
		name string
		args []string
		want string // the message after "sframe-gen: FILE: "
	}{
		{"FIFO", []string{fifo}, "not a regular file (a FIFO)"},
		{"directory", []string{dir}, "not a regular file (a directory)"},
		{"device", []string{"/dev/null"}, "not a regular file (a character device)"},
		{"missing", []string{filepath.Join(dir, "missing")}, "no such file or directory"},
		{"empty", []string{write("empty", nil)}, "empty file, not an ELF file"},
		{"text", []string{write("text", []byte("#!/bin/sh\n"))}, "not an ELF file"},
		{"not ELF", []string{write("notelf", []byte("#!/bin/sh\necho this is not an ELF file\n"))}, "not an ELF file"},
		{"3 bytes", []string{write("3", []byte("\x7fEL"))}, "not an ELF file (3 bytes)"},
		{"header cut", []string{write("hdr", elfData[:40])}, "ELF header cut off: the file has 40 bytes, the header 64"},
		{"phdrs cut", []string{write("phdrs", elfData[:100])}, "program header table (offset 0x40, "},
		{"shdrs cut", []string{write("shdrs", elfData[:len(elfData)-10])}, "section header table (offset "},
		{"section past EOF -o", []string{"-o", filepath.Join(dir, "out"), write("past", pastEOF)}, "section "},
		{"output dir missing", []string{"-o", filepath.Join(dir, "no/such/out"), write("good", elfData)}, "writing " + filepath.Join(dir, "no/such/out") + ": "},
	} {
		for _, cmd := range []string{"", "dump", "rows", "verify", "stats"} {
			args := tc.args
			if (cmd == "" || cmd == "stats") && tc.name == "directory" {
				continue // the batch form and stats walk it (batch_test.go, statstree_test.go)
			}
			if cmd != "" {
				if args[0] == "-o" {
					continue // generate only
				}
				args = append([]string{cmd}, args...)
			}
			status := exitFailure
			if cmd == "verify" {
				status = exitUsage // "FILE cannot be checked"
			}
			t.Run(strings.TrimSpace(cmd+" "+tc.name), func(t *testing.T) {
				checkSpecial(t, args, tc.want, status)
			})
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".sframe-gen-") {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
}

// checkSpecial runs the CLI with args and checks that it fails with status
// and one line "sframe-gen: FILE: want...", FILE the last argument.
func checkSpecial(t *testing.T, args []string, want string, status int) {
	res, hung := cliRunner.run(args...)
	if hung {
		t.Fatalf("no result after %v", cliRunner.timeout)
	}
	if res.panicked != nil {
		t.Fatalf("panic: %v\n%s", res.panicked, res.stack)
	}
	prefix := "sframe-gen: " + args[len(args)-1] + ": "
	if res.code != status || !strings.HasPrefix(res.stderr, prefix+want) || strings.Count(res.stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want status %d and one line starting %q", res.code, res.stderr, status, prefix+want)
	}
	if args[0] == "-o" && strings.Contains(res.stderr, ": writing ") && !strings.Contains(want, "writing ") {
		t.Errorf("an input problem reported as an output one: %q", res.stderr)
	}
}
