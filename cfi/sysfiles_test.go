package cfi

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

// The tests find the system's files by asking the tools that use them,
// not at fixed paths: gcc says where it links a library from
// (gcc -print-file-name=libc.so.6), the dynamic linker's cache lists the
// others (ldconfig -p), $PATH holds the programs. A file that cannot be
// found skips the test, saying why (needTool), except under CI=true
// (.ci/run installs everything), where it fails.

// compilerLib returns the path of the library name that compiler cc links
// ("gcc": the host's), with symbolic links resolved; it skips t (fails it
// under CI=true) when cc or the library is missing.
func compilerLib(t testing.TB, cc, name string) string {
	t.Helper()
	out, err := exec.Command(cc, "-print-file-name="+name).Output()
	if err != nil {
		needTool(t, cc+" (to find "+name+")")
	}
	p := strings.TrimSpace(string(out))
	// gcc prints the name alone when it finds no such file.
	real, err := filepath.EvalSymlinks(p)
	if !filepath.IsAbs(p) || err != nil {
		needTool(t, name+" (as "+cc+" -print-file-name finds it)")
	}
	return real
}

// pathProgram returns the first ELF file called name in $PATH (a script
// of that name, such as a version manager's shim, is passed over), with
// symbolic links resolved; it skips t (fails it under CI=true) when there
// is none.
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
	needTool(t, "an ELF program "+name+" in $PATH")
	return ""
}

// bigLib returns the biggest libLLVM in the dynamic linker's cache
// (ldconfig -p), or "" when there is none: tests add it to their inputs
// where it is. CI does not install LLVM.
func bigLib(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("ldconfig", "-p").Output()
	if err != nil {
		out, _ = exec.Command("/sbin/ldconfig", "-p").Output()
	}
	var libs []string
	for _, line := range bytes.Split(out, []byte("\n")) {
		name, path, ok := strings.Cut(strings.TrimSpace(string(line)), " => ")
		if ok && strings.HasPrefix(name, "libLLVM") {
			if real, err := filepath.EvalSymlinks(path); err == nil {
				libs = append(libs, real)
			}
		}
	}
	if len(libs) == 0 {
		t.Log("no libLLVM in ldconfig -p: the big-library case is not run")
		return ""
	}
	size := func(p string) int64 {
		if fi, err := os.Stat(p); err == nil {
			return fi.Size()
		}
		return 0
	}
	sort.SliceStable(libs, func(i, j int) bool { return size(libs[i]) < size(libs[j]) })
	return libs[len(libs)-1]
}
