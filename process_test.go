package sframegen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCloseInput: with Resources.CloseInput, Process hands over the file it
// read, still open (its last close is the caller's), once the file is
// replaced; without it, Process closes the file itself.
func TestCloseInput(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "link", "x86_64", "lazy.so"))
	if err != nil {
		t.Fatal(err)
	}
	for _, hand := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "lazy.so")
		if err := os.WriteFile(path, src, 0o755); err != nil {
			t.Fatal(err)
		}
		var given []*os.File
		res := Resources{}
		if hand {
			res.CloseInput = func(f *os.File) { given = append(given, f) }
		}
		g, err := NewGenerator(Options{}, res)
		if err != nil {
			t.Fatal(err)
		}
		in, err := NamedPlace(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := g.Process(Job{In: in})
		in.Dir.Close()
		if err != nil || out.Status != Patched {
			t.Fatalf("CloseInput %v: Process: %v, %v", hand, out.Status, err)
		}
		if !hand {
			continue
		}
		if len(given) != 1 {
			t.Fatalf("CloseInput called %d times, want once", len(given))
		}
		// Still open, and the file read: the one replaced.
		old := make([]byte, len(src))
		if _, err := given[0].ReadAt(old, 0); err != nil || !bytes.Equal(old, src) {
			t.Errorf("the file handed over does not read as the input: %v", err)
		}
		if err := given[0].Close(); err != nil {
			t.Errorf("closing the file handed over: %v", err)
		}
		if now, _ := os.ReadFile(path); bytes.Equal(now, src) {
			t.Errorf("%s not patched", path)
		}
	}
}
