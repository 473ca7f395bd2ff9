package sframegen

import (
	"bytes"
	"errors"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
	"os"
	"path/filepath"
	"testing"
)

// TestCloseInput: with a closeInput (ProcessTree's), process hands over the file it
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
		var closeInput func(*os.File)
		if hand {
			closeInput = func(f *os.File) { given = append(given, f) }
		}
		g, err := NewGenerator(Options{}, Resources{})
		if err != nil {
			t.Fatal(err)
		}
		in, err := replace.NamedPlace(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := g.process(Job{In: in}, [2]uint64{}, closeInput)
		in.Dir.Close()
		if err != nil || out.Status != Patched {
			t.Fatalf("closeInput %v: Process: %v, %v", hand, out.Status, err)
		}
		if !hand {
			continue
		}
		if len(given) != 1 {
			t.Fatalf("closeInput called %d times, want once", len(given))
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

// TestProcessPanicIsAnError: a panic while a file is processed (here from
// the caller's hooks, before anything is written and once the new file is
// complete) is returned as an *InternalError; the file is as it was and
// no temporary file is left.
func TestProcessPanicIsAnError(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "link", "x86_64", "lazy.so"))
	if err != nil {
		t.Fatal(err)
	}
	boom := func() { panic("boom") }
	for _, c := range []struct {
		name string
		res  Resources
		job  func(*Job)
	}{
		{"in Admit", Resources{Admit: func(Cost) (func(), error) { boom(); return nil, nil }}, func(*Job) {}},
		{"once written", Resources{}, func(j *Job) { j.Replace.Written = boom }},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "lazy.so")
		if err := os.WriteFile(path, src, 0o755); err != nil {
			t.Fatal(err)
		}
		g, err := NewGenerator(Options{}, c.res)
		if err != nil {
			t.Fatal(err)
		}
		in, err := replace.NamedPlace(path)
		if err != nil {
			t.Fatal(err)
		}
		j := Job{In: in}
		c.job(&j)
		out, err := g.Process(j)
		in.Dir.Close()
		var ie *InternalError
		if !errors.As(err, &ie) || ie.Panic != "boom" || len(ie.Stack) == 0 || out.Status != Failed {
			t.Errorf("%s: %v, %v; want an *InternalError", c.name, out.Status, err)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, src) {
			t.Errorf("%s: the file changed", c.name)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s: %d entries in the directory, want the file alone", c.name, len(ents))
		}
	}
}

// TestGeneratePanicIsAnError: Generate (and GenerateAt: --raw) returns a
// panic as an *InternalError too.
func TestGeneratePanicIsAnError(t *testing.T) {
	g, err := NewGenerator(Options{}, Resources{Admit: func(Cost) (func(), error) { panic("boom") }})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "link", "x86_64", "lazy.so"))
	if err != nil {
		t.Fatal(err)
	}
	sec, err := g.Generate(bytes.NewReader(data), int64(len(data)))
	var ie *InternalError
	if sec != nil || !errors.As(err, &ie) || ie.Panic != "boom" {
		t.Errorf("Generate: %v, %v; want an *InternalError", sec, err)
	}
}
