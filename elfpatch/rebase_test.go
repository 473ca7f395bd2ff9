package elfpatch

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestRebase moves gas sections (made position-dependent by hand) and
// checks through emit that every function start is unchanged.
func TestRebase(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/gas/*/*.gs.sframe")
	if len(paths) == 0 {
		t.Fatal("no testdata/gas/*/*.gs.sframe")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := emit.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		const oldAddr, newAddr = 0x402000, 0x1234568
		got, err := rebase(b, oldAddr, newAddr)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		r, err := emit.Decode(got)
		if err != nil {
			t.Fatalf("%s: rebased: %v", p, err)
		}
		for i := range s.Index {
			if a, b := s.FuncStart(i, oldAddr), r.FuncStart(i, newAddr); a != b {
				t.Errorf("%s: FDE %d starts at %#x after rebase, want %#x", p, i, b, a)
			}
		}
		back, _ := rebase(got, newAddr, oldAddr)
		if !bytes.Equal(back, b) {
			t.Errorf("%s: rebase there and back differs", p)
		}
	}
	if _, err := rebase([]byte("short"), 0, 0); err == nil {
		t.Error("no error for a short section")
	}
}

func FuzzRebase(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/gas/*/*.gs.sframe")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := rebase(b, 0x1000, 0x2000)
		if err == nil && len(out) != len(b) {
			t.Fatal("size changed")
		}
	})
}
