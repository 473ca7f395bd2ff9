package main

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
// not at fixed paths: a compiler driver says where it links a library from
// (gcc -print-file-name=libc.so.6, and the cross compilers for their
// sysroot's, whose directory qemu-user's -L takes), the dynamic linker's
// cache lists the others (ldconfig -p), $PATH holds the programs. A file
// that cannot be found skips the test, saying why, except under CI=true
// (.ci/run installs everything), where it fails.

// needInput skips t (fails it under CI=true) because an input is missing.
func needInput(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: no test may skip)", args...)
	}
	t.Skipf(format, args...)
}

// compilerLib returns the path of the library name that compiler cc links
// ("gcc": the host's; "aarch64-linux-gnu-gcc": its sysroot's), with
// symbolic links resolved; it skips t (fails it under CI=true) when cc or
// the library is missing.
func compilerLib(t testing.TB, cc, name string) string {
	t.Helper()
	out, err := exec.Command(cc, "-print-file-name="+name).Output()
	if err != nil {
		needInput(t, "%s -print-file-name=%s: %v", cc, name, err)
	}
	p := strings.TrimSpace(string(out))
	// gcc prints the name alone when it finds no such file.
	if !filepath.IsAbs(p) {
		needInput(t, "%s does not find %s", cc, name)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		needInput(t, "%s: %v", name, err)
	}
	return real
}

// archLib returns the library name of arch ("x86_64", "aarch64",
// "s390x"): the host gcc's on a host of that architecture, else the
// cross compiler's.
func archLib(t testing.TB, arch, name string) string {
	t.Helper()
	if arch == runtimeArch() {
		return compilerLib(t, "gcc", name)
	}
	return compilerLib(t, arch+"-linux-gnu-gcc", name)
}

// qemuPrefix returns the directory qemu-user's -L takes for programs of
// arch: the one whose lib/ holds the C library arch's cross compiler links
// (/usr/aarch64-linux-gnu on Debian).
func qemuPrefix(t testing.TB, arch string) string {
	t.Helper()
	return filepath.Dir(filepath.Dir(compilerLib(t, arch+"-linux-gnu-gcc", "libc.so.6")))
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
	needInput(t, "no ELF program %s in $PATH", name)
	return ""
}

// hostBinutils returns the directory of the objdump in $PATH (with
// readelf and ld beside it) when it is GNU binutils release (e.g. "2.40",
// Debian 12's), or skips t (fails it under CI=true).
func hostBinutils(t testing.TB, release string) string {
	t.Helper()
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		needInput(t, "no objdump in $PATH (binutils %s)", release)
	}
	out, err := exec.Command(objdump, "--version").Output()
	first, _, _ := strings.Cut(string(out), "\n")
	if err != nil || !strings.Contains(first, " "+release) {
		needInput(t, "%s is %q, not binutils %s", objdump, first, release)
	}
	return filepath.Dir(objdump)
}

// bigLib returns the biggest libLLVM in the dynamic linker's cache
// (ldconfig -p), or "" when there is none: tests add it to their inputs
// where it is. CI does not install LLVM.
func bigLib() string {
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

// prefixLib returns the library name under an installed prefix root
// (root/usr/lib/<multiarch>/name, root/usr/lib*/name or root/lib*/name);
// when it has none, the first of those patterns, for the caller's error.
func prefixLib(root, name string) string {
	pats := []string{"usr/lib/*/" + name, "usr/lib*/" + name, "lib*/" + name}
	for _, pat := range pats {
		if m, _ := filepath.Glob(filepath.Join(root, pat)); len(m) > 0 {
			return m[0]
		}
	}
	return filepath.Join(root, pats[0])
}
