package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchLookupScript runs testdata/bench-lookup.sh for one short round on
// a golden program: the script, its C harness and its Go side build, and
// emit.Reader and GNU libsframe find the same FREs (the same count and sum
// of CFA offsets) for every FRE start and random PCs inside functions.
func TestBenchLookupScript(t *testing.T) {
	libsframeLookup(t) // gcc and the reference prefix, or skip (fail under CI)
	root, err := filepath.Abs(filepath.Join(testdataDir(), ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "testdata", "bench-lookup.sh"), filepath.Join(root, "testdata", "link", "x86_64", "leveldb.exe"))
	cmd.Env = append(os.Environ(), "ROUNDS=1", "PASSES=1", "PCS=20000")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench-lookup.sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "agree: found ") || !strings.Contains(string(out), "ratio emit.Reader / libsframe: ") {
		t.Errorf("bench-lookup.sh printed:\n%s", out)
	}
}
