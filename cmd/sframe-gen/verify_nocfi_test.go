package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestVerifyWithoutCFI: verify on a file whose CFI was stripped after it
// was patched (a C program without .eh_frame and .eh_frame_hdr, a Go
// program without .debug_frame, an object without .eh_frame), or asked
// to compare with a CFI section the file does not have, says the file
// cannot be checked (exit 2) instead of counting every function as a
// problem.
func TestVerifyWithoutCFI(t *testing.T) {
	objcopy := sysfiles.NeedProgram(t, "objcopy")
	dir := t.TempDir()
	patched := func(from, name string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		copyFile(t, from, p)
		if _, stderr, code := runCLI(p); code != exitOK {
			t.Fatalf("generate %s: exit %d: %s", name, code, stderr)
		}
		return p
	}
	strip := func(in string, args ...string) string {
		t.Helper()
		out := in + ".stripped"
		if msg, err := exec.Command(objcopy, append(args, in, out)...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %q: %v\n%s", args, err, msg)
		}
		return out
	}
	td := testdataDir()
	cProg := patched(filepath.Join(td, "link/x86_64/pie.exe"), "pie.exe")
	goProg := patched(buildCommand(t), "go.exe")
	obj := patched(filepath.Join(td, "cc/x86_64/O2/drap.o"), "drap.o")
	for _, tc := range []struct {
		name, file string
		args       []string
		what       string
	}{
		{"C program, .eh_frame removed", strip(cProg, "--remove-section", ".eh_frame", "--remove-section", ".eh_frame_hdr"), nil, "CFI"},
		{"Go program, --strip-debug", strip(goProg, "--strip-debug"), nil, "CFI"},
		{"object, .eh_frame removed", strip(obj, "--remove-section", ".eh_frame", "--remove-section", ".rela.eh_frame"), nil, "CFI"},
		{"--debug-frame, only .eh_frame", cProg, []string{"--debug-frame"}, ".debug_frame"},
		{"--eh-frame, only .debug_frame", goProg, []string{"--eh-frame"}, ".eh_frame"},
		{"--json", strip(cProg, "--remove-section", ".eh_frame", "--remove-section", ".eh_frame_hdr"), []string{"--json"}, "CFI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"verify"}, tc.args...), tc.file)
			stdout, stderr, code := runCLI(args...)
			want := "sframe-gen: " + tc.file + ": cannot be checked: " + tc.file + " has no " + tc.what + " to check its .sframe against\n"
			if code != exitUsage || stdout != "" || stderr != want {
				t.Errorf("sframe-gen %q: exit %d\nstdout %q\nstderr %q\nwant exit 2 and %q", args, code, stdout, stderr, want)
			}
		})
	}
	// The unstripped files still check clean.
	for _, f := range []string{cProg, goProg, obj} {
		if _, stderr, code := runCLI("verify", f); code != exitOK {
			t.Errorf("verify %s: exit %d: %s", f, code, stderr)
		}
	}
	// stats still describes a stripped file's section.
	if _, stderr, code := runCLI("stats", strip(goProg, "--strip-debug")); code != exitOK {
		t.Errorf("stats on the stripped Go program: exit %d: %s", code, stderr)
	}
}
