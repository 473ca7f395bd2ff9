//go:build linux

package replace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestInheritedFD checks which paths name a descriptor of the process.
func TestInheritedFD(t *testing.T) {
	for _, tc := range []struct {
		path string
		fd   int
		ok   bool
	}{
		{"/dev/stdout", 1, true},
		{"/dev/stderr", 2, true},
		{"/dev/fd/7", 7, true},
		{"/proc/self/fd/12", 12, true},
		{"/dev/fd/", 0, false},
		{"/dev/fd/+3", 3, false},
		{"/dev/fd/3x", 0, false},
		{"/dev/stdin", 0, false},
		{"out.json", 0, false},
	} {
		fd, ok := InheritedFD(tc.path)
		if ok != tc.ok || ok && fd != tc.fd {
			t.Errorf("InheritedFD(%q) = %d, %v; want %d, %v", tc.path, fd, ok, tc.fd, tc.ok)
		}
	}
}

// TestOpenStream checks where a stream goes: "-" and /dev/stdout to
// standard output, /dev/stderr to standard error, an inherited
// descriptor through it, a new or regular file replaced at the end (the
// mode given to a new one), a FIFO as it is; and that a directory that
// cannot be written fails at once, naming the directory.
func TestOpenStream(t *testing.T) {
	fill := func(w io.Writer) error { _, err := io.WriteString(w, "lines\n"); return err }
	var stdout, stderr bytes.Buffer
	for _, path := range []string{"-", "/dev/stdout", "/dev/stderr"} {
		stdout.Reset()
		stderr.Reset()
		s, err := OpenStream(path, 0o600, &stdout, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if s.Terminal() {
			t.Errorf("%s: a buffer is a terminal", path)
		}
		if err := s.Finish(nil, fill); err != nil {
			t.Fatal(err)
		}
		want := &stdout
		if path == "/dev/stderr" {
			want = &stderr
		}
		if want.String() != "lines\n" || stdout.Len()+stderr.Len() != len("lines\n") {
			t.Errorf("%s: standard output %q, standard error %q", path, stdout.String(), stderr.String())
		}
	}

	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s, err := OpenStream("/dev/fd/"+strconv.Itoa(int(w.Fd())), 0o600, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(nil, fill); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, _ := r.Read(buf); string(buf[:n]) != "lines\n" {
		t.Errorf("through the descriptor: %q", buf[:n])
	}
	if _, err := OpenStream("/dev/fd/999", 0o600, nil, nil); err == nil {
		t.Errorf("a descriptor not open: no error")
	}

	file := filepath.Join(dir, "report.json")
	s, err = OpenStream(file, 0o640, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file made before the stream is written: %v", err)
	}
	var temps TempFiles
	if err := s.Finish(&temps, fill); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "lines\n" {
		t.Errorf("file: %q, %v", b, err)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o640&^umask() {
		t.Errorf("file mode: %v, %v", st.Mode(), err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = OpenStream(fifo, 0o600, nil, nil) // no reader yet: not waited for
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := s.Finish(nil, fill); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != "lines\n" {
		t.Errorf("FIFO: %q", g)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", st.Mode(), err)
	}

	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		_, err := OpenStream(filepath.Join(ro, "x"), 0o600, nil, nil)
		var pe *fs.PathError
		if !errors.As(err, &pe) || pe.Path != ro {
			t.Errorf("a directory that cannot be written: %v, want an *fs.PathError naming %s", err, ro)
		}
	}
}

func umask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}
