package delvecheck

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test finds the system's files by asking the tools that use them,
// not at fixed paths: $PATH holds the programs, gcc says where it links a
// library from (gcc -print-file-name=libstdc++.so.6). A file that cannot
// be found skips the test, saying why, except under CI=true (.ci/run
// installs everything), where it fails.

// needInput skips t (fails it under CI=true) because an input is missing.
func needInput(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: no test may skip)", args...)
	}
	t.Skipf(format, args...)
}

// pathProgram returns the first ELF file called name in $PATH (a script
// of that name, such as a version manager's shim, is passed over), with
// symbolic links resolved, or skips t (fails it under CI=true).
func pathProgram(t testing.TB, name string) string {
	t.Helper()
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p, err := filepath.EvalSymlinks(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if f, err := elf.Open(p); err == nil {
			f.Close()
			return p
		}
	}
	needInput(t, "no ELF program %s in $PATH", name)
	return ""
}

// gccLib returns the path of the library name gcc links, with symbolic
// links resolved, or skips t (fails it under CI=true).
func gccLib(t testing.TB, name string) string {
	t.Helper()
	out, err := exec.Command("gcc", "-print-file-name="+name).Output()
	if err != nil {
		needInput(t, "gcc -print-file-name=%s: %v", name, err)
	}
	p := strings.TrimSpace(string(out))
	real, errLink := filepath.EvalSymlinks(p)
	// gcc prints the name alone when it finds no such file.
	if !filepath.IsAbs(p) || errLink != nil {
		needInput(t, "gcc does not find %s", name)
	}
	return real
}
