package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSparseInput: a 16 KB executable padded to 1 GiB with a hole (a
// hostile input costing nothing on disk) must not make generate write
// 1 GiB: the output keeps the hole, with -o and in place.
func TestSparseInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "big.exe")
	data, err := os.ReadFile(filepath.Join(testdataDir(), "link/x86_64/pie.exe"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(in, 1<<30); err != nil {
		t.Fatal(err)
	}
	if b := diskBytes(t, in); b > 1<<20 {
		t.Skipf("the file system does not keep holes (%d bytes on disk)", b)
	}
	out := filepath.Join(dir, "out.exe")
	for _, args := range [][]string{{"-o", out, in}, {in}} {
		_, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		p := args[len(args)-1]
		if len(args) == 3 {
			p = out
		}
		if b := diskBytes(t, p); b > 1<<20 {
			t.Errorf("%v: output uses %d MiB on disk: the hole was written", args, b>>20)
		}
		if st, err := os.Stat(p); err != nil || st.Size() < 1<<30 {
			t.Errorf("%v: output size %v, %v", args, st.Size(), err)
		}
		if _, stderr, code := runCLI("dump", p); code != exitOK {
			t.Errorf("dump %s: exit %d: %s", p, code, stderr)
		}
	}
}

func diskBytes(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no Stat_t")
	}
	return s.Blocks * 512
}
