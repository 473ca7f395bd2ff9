//go:build linux

package sparse

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestCopy(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	// data, 64 MiB hole, data, 64 MiB trailing hole
	a, b := bytes.Repeat([]byte("a"), 5000), bytes.Repeat([]byte("b"), 7000)
	f.WriteAt(a, 0)
	f.WriteAt(b, 64<<20)
	size := int64(128 << 20)
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{size, 64<<20 + 3000, 2000} {
		out, err := os.Create(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		if err := Copy(out, f, n); err != nil {
			t.Fatal(err)
		}
		st, _ := out.Stat()
		if st.Size() != n {
			t.Errorf("n %d: output size %d", n, st.Size())
		}
		for _, c := range []struct {
			off  int64
			want []byte
		}{{0, a}, {64 << 20, b}, {32 << 20, make([]byte, 4096)}} {
			if c.off >= n {
				continue
			}
			want := c.want
			if c.off+int64(len(want)) > n {
				want = want[:n-c.off]
			}
			got := make([]byte, len(want))
			out.ReadAt(got, c.off)
			if !bytes.Equal(got, want) {
				t.Errorf("n %d: bytes at %#x differ", n, c.off)
			}
		}
		if in, ok := statBlocks(f); ok && in < 1<<20 {
			if o, _ := statBlocks(out); o > 1<<20 {
				t.Errorf("n %d: output uses %d bytes on disk for %d of data: holes written", n, o, len(a)+len(b))
			}
		}
		out.Close()
	}
	// A file cut below n is an error.
	out, _ := os.Create(filepath.Join(dir, "out2"))
	if err := Copy(out, f, size+1); err == nil {
		t.Errorf("no error copying past the end of the input")
	}
}

// statBlocks returns the bytes f occupies on disk.
func statBlocks(f *os.File) (int64, bool) {
	st, err := f.Stat()
	if err != nil {
		return 0, false
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return s.Blocks * 512, true
}
