//go:build linux

package replace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"golang.org/x/sys/unix"
)

// TestIsTerminal checks IsTerminal on a pseudo-terminal (the master side
// of /dev/ptmx: TCGETS succeeds on it), a regular file, a pipe and a
// descriptor that is not open, and that a Stream writing to the
// pseudo-terminal is one.
func TestIsTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		sysfiles.NeedInput(t, "no pseudo-terminal to test with (/dev/ptmx, devpts mounted): %v", err)
	}
	defer ptmx.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		name string
		fd   int
		want bool
	}{
		{"pseudo-terminal", int(ptmx.Fd()), true},
		{"regular file", int(file.Fd()), false},
		{"pipe", int(w.Fd()), false},
		{"not open", 1 << 20, false},
		{"negative", -1, false},
	} {
		if got := IsTerminal(c.fd); got != c.want {
			t.Errorf("%s: IsTerminal = %v, want %v", c.name, got, c.want)
		}
	}
	s, err := OpenStream("-", 0o600, ptmx, ptmx)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Terminal() {
		t.Error("a Stream to a pseudo-terminal is not a terminal")
	}
}
