package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestVerboseUpToDate: on a second run, -v says "up to date" for every
// file it leaves as it is (an object, a linked file, an archive and its
// members; one FILE at a time and in the batch form), and "wrote" for
// none.
func TestVerboseUpToDate(t *testing.T) {
	ar := sysfiles.NeedProgram(t, "ar")
	td := testdataDir()
	dir := t.TempDir()
	obj := filepath.Join(dir, "drap.o")
	exe := filepath.Join(dir, "pie.exe")
	lib := filepath.Join(dir, "libdemo.a")
	copyFile(t, filepath.Join(td, "cc/x86_64/O2/drap.o"), obj)
	copyFile(t, filepath.Join(td, "link/x86_64/pie.exe"), exe)
	copyFile(t, filepath.Join(td, "link/x86_64/demo.pic.o"), filepath.Join(dir, "demo.o"))
	if msg, err := exec.Command(ar, "rcsD", lib, filepath.Join(dir, "demo.o"), obj).CombinedOutput(); err != nil {
		t.Fatalf("ar: %v\n%s", err, msg)
	}
	files := []string{obj, exe, lib}
	for _, f := range files {
		if _, stderr, code := runCLI(f); code != exitOK {
			t.Fatalf("first run on %s: exit %d: %s", f, code, stderr)
		}
	}
	want := map[string][]string{
		obj: {obj},
		exe: {exe},
		lib: {lib + "(demo.o)", lib + "(drap.o)", lib},
	}
	check := func(args []string, names []string) {
		t.Helper()
		_, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Fatalf("sframe-gen %q: exit %d: %s", args, code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		var got []string
		for _, l := range lines {
			if strings.HasSuffix(l, " covered") {
				continue // the batch's summary
			}
			got = append(got, l)
		}
		var expect []string
		for _, n := range names {
			expect = append(expect, "sframe-gen: "+n+": up to date: its SFrame is already what would be written")
		}
		if strings.Join(got, "\n") != strings.Join(expect, "\n") {
			t.Errorf("sframe-gen %q on up-to-date files says\n%s\nwant\n%s", args, strings.Join(got, "\n"), strings.Join(expect, "\n"))
		}
	}
	for _, f := range files {
		check([]string{"-v", f}, want[f])
	}
	var all []string
	for _, f := range files {
		all = append(all, want[f]...)
	}
	check(append([]string{"-v", "-j", "1"}, files...), all)
	for _, f := range files {
		before, _ := os.Stat(f)
		check([]string{"-v", f}, want[f])
		if after, _ := os.Stat(f); !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("%s rewritten", f)
		}
	}
}
