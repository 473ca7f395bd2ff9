package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"golang.org/x/sys/unix"
)

// TestGenerateFlags checks the generate command's flags and exit statuses.
func TestGenerateFlags(t *testing.T) {
	obj := filepath.Join(testdataDir(), "gas", "x86_64", "basic.o")
	s390 := filepath.Join(testdataDir(), "gas", "s390x", "basic.o")
	retcol := filepath.Join(testdataDir(), "gas", "x86_64", "retcol.o")
	sections := filepath.Join(testdataDir(), "gas", "x86_64", "sections.o")
	for _, p := range []string{obj, s390, retcol, sections} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("missing golden input: %v", err)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out.o")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // substring
	}{
		{"version", []string{"--version"}, 0, ""},
		{"no file", nil, 2, "expected a FILE"},
		{"two files with -o", []string{"-o", out, obj, obj}, 2, "-o goes with one FILE"},
		{"two files with --raw", []string{"--raw", obj, obj}, 2, "--raw goes with one FILE"},
		{"unknown flag", []string{"--frobnicate", obj}, 2, "unknown flag"},
		{"both sources", []string{"--eh-frame", "--debug-frame", obj}, 2, "exclude each other"},
		{"section-addr without raw", []string{"--section-addr", "4096", obj}, 2, "--section-addr goes with --raw"},
		{"bad arch name", []string{"--arch", "mips", "-o", out, obj}, 2, "mips"},
		{"arch matches", []string{"--arch", "amd64", "-o", out, obj}, 0, ""},
		{"arch mismatch", []string{"--arch", "s390x", "-o", out, obj}, 1, "is for x86_64, not s390x"},
		{"arch mismatch s390x", []string{"--arch", "aarch64", "-o", out, s390}, 1, "is for s390x, not aarch64"},
		{"missing file", []string{"-o", out, filepath.Join(dir, "nope.o")}, 1, "nope.o: no such file"},
		{"directory with -o", []string{"-o", out, dir}, 2, "-o goes with one FILE"},
		{"not ELF", []string{"-o", out, filepath.Join(testdataDir(), "README.md")}, 1, "README.md: "},
		{"gas-compat with share-fres", []string{"--gas-compat", "--share-fres", "-o", out, obj}, 2, "exclude each other"},
		{"share-fres and no-share-fres", []string{"--share-fres", "--no-share-fres", "-o", out, obj}, 2, "contradict"},
		{"gas-compat without sharing", []string{"--gas-compat", "--no-share-fres", "-o", out, obj}, 0, ""},
		{"share-fres=false", []string{"--share-fres=false", "-o", out, obj}, 0, ""},
		{"share-fres on big-endian", []string{"--share-fres", "-o", out, s390}, 1, "--share-fres: the file is big-endian"},
		{"big-endian by default", []string{"-v", "-o", out, s390}, 0, "one block of FREs per function: big-endian file"},
		{"gas-compat says why", []string{"-v", "--gas-compat", "-o", out, obj}, 0, "one block of FREs per function: GNU's bytes asked for"},
		{"objects unshared by default", []string{"-v", "-o", out, obj}, 0, "(94 bytes, 2 FDEs, 7 FREs, one block of FREs per function: relocatable object"},
		{"shared when asked", []string{"-v", "--share-fres", "-o", out, obj}, 0, "(94 bytes, 2 FDEs, 7 FREs, 0 FDEs sharing an earlier one's FREs)"},
		{"one of each", []string{"-v", "--share-fres", "-o", out, retcol}, 0, "(52 bytes, 1 FDE, 1 FRE, 0 FDEs sharing"},
		{"one shared", []string{"-v", "--share-fres", "-o", out, sections}, 0, "(156 bytes, 5 FDEs, 12 FREs, 1 FDE sharing an earlier one's FREs)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.stderr)
			}
			if tc.code == 1 && strings.Count(stderr, "\n") != 1 {
				t.Errorf("want exactly one line on stderr, got %q", stderr)
			}
		})
	}
}

// TestGenerateRawAndInPlace checks that --raw writes exactly the section a
// patched object carries, and that in-place generation keeps the file mode.
func TestGenerateRawAndInPlace(t *testing.T) {
	src := filepath.Join(testdataDir(), "gas", "x86_64", "basic.o")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.o")
	if err := os.WriteFile(in, data, 0o640); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "raw")
	if _, stderr, code := runCLI("--raw", "-o", raw, in); code != 0 {
		t.Fatalf("--raw: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLI(in); code != 0 {
		t.Fatalf("in place: exit %d: %s", code, stderr)
	}
	st, err := os.Stat(in)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode after in-place run %v, want 0640", st.Mode().Perm())
	}
	f, err := elf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".sframe")
	if sec == nil {
		t.Fatal("no .sframe after in-place run")
	}
	got, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("--raw bytes differ from the patched object's .sframe")
	}
	gs, err := os.ReadFile(strings.TrimSuffix(src, ".o") + ".gs.sframe")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, gs) {
		t.Errorf("--raw bytes differ from gas's .sframe (basic.gs.sframe)")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "sframe-gen") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestGenerateNoCFI checks a file without call-frame information (no CFI
// section, or an .eh_frame without entries): in place it is left as it is
// (not even rewritten), with -o the output is a copy, --raw fails, and -v
// says why.
func TestGenerateNoCFI(t *testing.T) {
	hello := filepath.Join(testdataDir(), "sample", "hello-x86_64")
	for _, tc := range []struct {
		name, src string
		empty     bool // zero .eh_frame's bytes instead of renaming it
	}{
		{"hello-x86_64", hello, false},
		{"basic.o", filepath.Join(testdataDir(), "gas", "x86_64", "basic.o"), false},
		{"hello-x86_64 empty .eh_frame", hello, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			var renamed []byte
			if tc.empty {
				// Only zero terminators: a section without entries.
				ef, err := elf.NewFile(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				s := ef.Section(".eh_frame")
				if s == nil {
					t.Fatal("no .eh_frame")
				}
				renamed = append([]byte(nil), data...)
				clear(renamed[s.Offset : s.Offset+s.FileSize])
			} else {
				// Rename .eh_frame in the section name table: no CFI left.
				renamed = bytes.Replace(data, []byte(".eh_frame\x00"), []byte(".xh_frame\x00"), -1)
			}
			if bytes.Equal(renamed, data) {
				t.Fatal("the input was not changed")
			}
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			if err := os.WriteFile(in, renamed, 0o750); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.Chtimes(in, old, old); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runCLI("-v", in)
			if code != 0 || !strings.Contains(stderr, "no call-frame information; nothing to generate") {
				t.Errorf("in place: exit %d, stderr %q", code, stderr)
			}
			st, err := os.Stat(in)
			if err != nil {
				t.Fatal(err)
			}
			if !st.ModTime().Equal(old) {
				t.Errorf("in place: the file was rewritten (mtime %v, was %v)", st.ModTime(), old)
			}
			out := filepath.Join(dir, "out")
			if _, stderr, code := runCLI("-o", out, in); code != 0 {
				t.Fatalf("-o: exit %d: %s", code, stderr)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, renamed) {
				t.Errorf("-o: the output is not a copy of the input")
			}
			if _, stderr, code := runCLI("--raw", "-o", filepath.Join(dir, "raw"), in); code == 0 ||
				!strings.Contains(stderr, "no call-frame information") {
				t.Errorf("--raw: exit %d, stderr %q", code, stderr)
			}
			if now, _ := os.ReadFile(in); !bytes.Equal(now, renamed) {
				t.Errorf("the input changed")
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), "sframe-gen") {
					t.Errorf("temporary file left behind: %s", e.Name())
				}
			}
		})
	}
}

// TestRawRefusesTerminal checks that --raw does not write the section's
// bytes to a terminal (a pseudo-terminal here): a usage error, nothing
// written; to a file or with -o it writes them.
func TestRawRefusesTerminal(t *testing.T) {
	obj := filepath.Join(testdataDir(), "gas", "x86_64", "basic.o")
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		sysfiles.NeedInput(t, "no pseudo-terminal (/dev/ptmx: mount devpts): %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "raw"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, tc := range []struct {
		name   string
		stdout *os.File
		args   []string
		code   int
	}{
		{"terminal", tty, []string{"--raw", obj}, exitUsage},
		{"terminal as -o -", tty, []string{"--raw", "-o", "-", obj}, exitUsage},
		{"terminal as -o /dev/fd/N", file, []string{"--raw", "-o", fmt.Sprintf("/dev/fd/%d", tty.Fd()), obj}, exitUsage},
		{"terminal with -o", tty, []string{"--raw", "-o", file.Name() + ".o", obj}, exitOK},
		{"file", file, []string{"--raw", obj}, exitOK},
	} {
		var stderr bytes.Buffer
		c := &cli{stdout: tc.stdout, stderr: &stderr}
		code := c.main(tc.args)
		st, err := tc.stdout.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", tc.name, code, tc.code, stderr.String())
		}
		switch {
		case tc.code == exitUsage && !strings.Contains(stderr.String(), " is a terminal"):
			t.Errorf("%s: stderr %q, want it to say why", tc.name, stderr.String())
		case tc.code == exitOK && tc.stdout == file && st.Size() == 0:
			t.Errorf("%s: nothing written to the file", tc.name)
		}
	}
}

// TestOutputStreams checks what -o names that are not files do: --raw
// writes the section to standard output ("-", /dev/stdout) and to an
// inherited descriptor (/dev/fd/N) as it writes it to a file; a patched
// file is refused there (a usage error, the input untouched).
func TestOutputStreams(t *testing.T) {
	src := filepath.Join(testdataDir(), "gas", "x86_64", "basic.o")
	fromFile := filepath.Join(t.TempDir(), "raw")
	if _, stderr, code := runCLI("--raw", "-o", fromFile, src); code != exitOK {
		t.Fatalf("--raw -o FILE: exit %d: %s", code, stderr)
	}
	want, err := os.ReadFile(fromFile)
	if err != nil || len(want) == 0 {
		t.Fatalf("--raw -o FILE wrote nothing: %v", err)
	}
	for _, out := range []string{"-", "/dev/stdout"} {
		stdout, stderr, code := runCLI("--raw", "-o", out, src)
		if code != exitOK || stdout != string(want) {
			t.Errorf("--raw -o %s: exit %d, %d bytes on stdout, want the %d of -o FILE; stderr %q", out, code, len(stdout), len(want), stderr)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, stderr, code := runCLI("--raw", "-o", fmt.Sprintf("/dev/fd/%d", w.Fd()), src)
	w.Close()
	if got, _ := io.ReadAll(r); code != exitOK || !bytes.Equal(got, want) {
		t.Errorf("--raw -o /dev/fd/N: exit %d, %d bytes read, want %d; stderr %q", code, len(got), len(want), stderr)
	}
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"-", "/dev/stdout", "/dev/fd/1"} {
		stdout, stderr, code := runCLI("-o", out, src)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "-o "+out+": the patched file is written to a file") {
			t.Errorf("-o %s: exit %d, stdout %d bytes, stderr %q; want a usage error", out, code, len(stdout), stderr)
		}
	}
	if after, _ := os.ReadFile(src); !bytes.Equal(after, before) {
		t.Errorf("%s changed", src)
	}
}
