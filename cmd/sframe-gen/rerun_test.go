package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRerunOtherOptions: a file generate patched before, run on again
// with other options, becomes what one run with those options makes of
// the original, and -v says that the earlier run's section was replaced
// (in place and with -o, on the three ABIs).
func TestRerunOtherOptions(t *testing.T) {
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		src := filepath.Join(testdataDir(), "link", arch, "lazy.so")
		dir := t.TempDir()
		alone := filepath.Join(dir, "alone.so")
		twice := filepath.Join(dir, "twice.so")
		copyFile(t, src, alone)
		copyFile(t, src, twice)
		if _, stderr, code := runCLI("--sframe-version", "2", alone); code != exitOK {
			t.Fatalf("%s: --sframe-version 2: exit %d\n%s", arch, code, stderr)
		}
		if _, stderr, code := runCLI(twice); code != exitOK {
			t.Fatalf("%s: first run: exit %d\n%s", arch, code, stderr)
		}
		out := filepath.Join(dir, "out.so")
		for _, args := range [][]string{{"-o", out, twice}, {twice}} {
			_, stderr, code := runCLI(append([]string{"-v", "--sframe-version", "2"}, args...)...)
			if code != exitOK || !strings.Contains(stderr, "in place of an earlier run's, patched as the file that run was given") {
				t.Errorf("%s: -v --sframe-version 2 %v: exit %d, want 0 and the earlier run's section replaced:\n%s", arch, args, code, stderr)
			}
			written := twice
			if len(args) == 3 {
				written = out
			}
			got, err := os.ReadFile(written)
			want, _ := os.ReadFile(alone)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %v: %d bytes, not the %d of --sframe-version 2 alone (%v)", arch, args, len(got), len(want), err)
			}
		}
	}
}
