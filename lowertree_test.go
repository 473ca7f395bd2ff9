package sframegen

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestLowerTreeTool checks testdata/lowertree, the CPU of the sections
// alone that testdata/bench-tree.sh prints beside cp -a: it counts the
// files with a section (not a text file, not a file without CFI) and
// the bytes of the sections, those the batch writes under an output
// directory.
func TestLowerTreeTool(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "lowertree")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "./testdata/lowertree")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building lowertree: %v\n%s", err, out)
	}
	tree := filepath.Join(dir, "tree")
	for _, name := range []string{"direct.so", "lazy.so", "pie.exe"} {
		data, err := os.ReadFile(filepath.Join("testdata", "link", "x86_64", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, "sub", name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(tree, "notes.txt"), []byte("not ELF\n"), 0o644)
	out, err := exec.Command(bin, "-n", "1", tree).CombinedOutput()
	if err != nil {
		t.Fatalf("lowertree: %v\n%s", err, out)
	}
	g, err := NewGenerator(Options{}, Resources{})
	if err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(dir, "out")
	w, err := Walk([]string{tree}, WalkOptions{OutputDir: written})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	bytes := 0
	if err := g.ProcessTree(w, TreeOptions{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	for _, f := range w.Files {
		if !f.Regular() {
			continue
		}
		ef, err := elf.Open(f.Output)
		if err != nil {
			continue
		}
		if s := ef.Section(".sframe"); s != nil {
			bytes += int(s.Size)
		}
		ef.Close()
	}
	want := fmt.Sprintf("3 of 4 files with a section, %d bytes of sections", bytes)
	cpu, got, _ := strings.Cut(strings.TrimSpace(string(out)), " s CPU: ")
	if _, err := strconv.ParseFloat(cpu, 64); err != nil || got != want {
		t.Errorf("lowertree: %q, want the CPU seconds, then %q", out, want)
	}
}
