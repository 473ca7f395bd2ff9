// Package sysfiles finds the system's files the tests read, by asking the
// tools that use them instead of naming fixed paths: a compiler driver
// says where it links a library from (gcc -print-file-name=libc.so.6, and
// the cross compilers for their sysroot's), the dynamic linker's cache
// lists the others (ldconfig -p), $PATH holds the programs. A file that
// cannot be found skips the test, saying why, except under CI=true
// (.ci/run installs everything), where it fails. One package for every
// test package of the module and of testdata/delvecheck.
package sysfiles

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// NeedInput skips t (fails it under CI=true) because an input is missing.
func NeedInput(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: no test may skip)", args...)
	}
	t.Skipf(format, args...)
}

// CompilerLib returns the path of the library name that compiler cc links
// ("gcc": the host's; "aarch64-linux-gnu-gcc": its sysroot's), with
// symbolic links resolved; it skips t (fails it under CI=true) when cc or
// the library is missing.
func CompilerLib(t testing.TB, cc, name string) string {
	t.Helper()
	out, err := exec.Command(cc, "-print-file-name="+name).Output()
	if err != nil {
		NeedInput(t, "%s -print-file-name=%s: %v", cc, name, err)
	}
	p := strings.TrimSpace(string(out))
	// gcc prints the name alone when it finds no such file.
	if !filepath.IsAbs(p) {
		NeedInput(t, "%s does not find %s", cc, name)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		NeedInput(t, "%s: %v", name, err)
	}
	return real
}

// PathProgram returns the first ELF file called name in $PATH (a script
// of that name, such as a version manager's shim, is passed over), with
// symbolic links resolved; it skips t (fails it under CI=true) when there
// is none.
func PathProgram(t testing.TB, name string) string {
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
	NeedInput(t, "no ELF program %s in $PATH", name)
	return ""
}

// LdconfigLibs returns the libraries of the dynamic linker's cache whose
// file name starts with prefix, each file once, the biggest last.
func LdconfigLibs(prefix string) []string {
	out, err := exec.Command("ldconfig", "-p").Output()
	if err != nil {
		out, err = exec.Command("/sbin/ldconfig", "-p").Output()
	}
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var libs []string
	for _, line := range bytes.Split(out, []byte("\n")) {
		name, path, ok := strings.Cut(strings.TrimSpace(string(line)), " => ")
		if !ok || !strings.HasPrefix(name, prefix) {
			continue
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		libs = append(libs, real)
	}
	size := func(p string) int64 {
		if fi, err := os.Stat(p); err == nil {
			return fi.Size()
		}
		return 0
	}
	sort.SliceStable(libs, func(i, j int) bool { return size(libs[i]) < size(libs[j]) })
	return libs
}

// BigLib returns the biggest libLLVM of the system (the biggest .eh_frame
// at hand), or "" when it has none: tests add it to their inputs where it
// is and say so when it is not. CI does not install LLVM.
func BigLib() string {
	libs := LdconfigLibs("libLLVM")
	if len(libs) == 0 {
		return ""
	}
	return libs[len(libs)-1]
}
