package sframegen_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit"
)

// TestReadmeProgram builds and runs the program of the README's "Use it as
// a Go library" on a shared library of testdata: at a function's first
// instruction on x86-64 the CFA is SP+8 and the return address at CFA-8.
func TestReadmeProgram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Use it as a Go library")
	if !ok {
		t.Fatal(`README.md has no "## Use it as a Go library"`)
	}
	_, code, ok := strings.Cut(after, "```go\n")
	if ok {
		code, _, ok = strings.Cut(code, "```")
	}
	if !ok {
		t.Fatal("no Go program in the README's library section")
	}
	// A module of its own outside the tree, this one replacing the
	// module's path, built offline from the module cache.
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	mod := "module readme\n\ngo 1.22\n\nrequire github.com/sframe-gen/sframe-gen v0.0.0\n\nreplace github.com/sframe-gen/sframe-gen => " + root + "\n"
	for name, data := range map[string][]byte{"main.go": []byte(code), "go.mod": []byte(mod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	lib := filepath.Join(root, "testdata", "link", "x86_64", "direct.so")
	sec, err := sframegen.GenerateFile(lib, sframegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := emit.NewReader(sec.Data, sec.Addr)
	if err != nil {
		t.Fatal(err)
	}
	// The function with the most FREs: a C function, not a PLT stub.
	pc, most := uint64(0), 0
	for i := 0; i < r.NumFuncs(); i++ {
		if f := r.Func(i); len(f.FDE.FREs) > most {
			pc, most = f.Start, len(f.FDE.FREs)
		}
	}
	cmd := exec.Command("go", "run", "-mod=mod", ".", lib, fmt.Sprintf("%#x", pc))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if want := "CFA = r7+8, return address at CFA-8\n"; string(out) != want {
		t.Errorf("the README's program printed %q, want %q", out, want)
	}
}
