package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// buildCommand builds the sframe-gen command into a temporary directory of
// t and returns the binary's path.
func buildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sframe-gen")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
