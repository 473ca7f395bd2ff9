package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// The tests find the system's files by asking the tools that use them,
// not at fixed paths: a compiler driver says where it links a library from
// (gcc -print-file-name=libc.so.6, and the cross compilers for their
// sysroot's, whose directory qemu-user's -L takes), the dynamic linker's
// cache lists the others (ldconfig -p), $PATH holds the programs. A file
// that cannot be found skips the test, saying why, except under CI=true
// (.ci/run installs everything), where it fails.

// archLib returns the library name of arch ("x86_64", "aarch64",
// "s390x"): the host gcc's on a host of that architecture, else the
// cross compiler's.
func archLib(t testing.TB, arch, name string) string {
	t.Helper()
	if arch == runtimeArch() {
		return sysfiles.CompilerLib(t, "gcc", name)
	}
	return sysfiles.CompilerLib(t, arch+"-linux-gnu-gcc", name)
}

// qemuPrefix returns the directory qemu-user's -L takes for programs of
// arch: the one whose lib/ holds the C library arch's cross compiler links
// (/usr/aarch64-linux-gnu on Debian).
func qemuPrefix(t testing.TB, arch string) string {
	t.Helper()
	return filepath.Dir(filepath.Dir(sysfiles.CompilerLib(t, arch+"-linux-gnu-gcc", "libc.so.6")))
}

// hostBinutils returns the directory of the objdump in $PATH (with
// readelf and ld beside it) when it is GNU binutils release (e.g. "2.40",
// Debian 12's), or skips t (fails it under CI=true).
func hostBinutils(t testing.TB, release string) string {
	t.Helper()
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		sysfiles.NeedInput(t, "no objdump in $PATH (binutils %s)", release)
	}
	out, err := exec.Command(objdump, "--version").Output()
	first, _, _ := strings.Cut(string(out), "\n")
	if err != nil || !strings.Contains(first, " "+release) {
		sysfiles.NeedInput(t, "%s is %q, not binutils %s", objdump, first, release)
	}
	return filepath.Dir(objdump)
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
