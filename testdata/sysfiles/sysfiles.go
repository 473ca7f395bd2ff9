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

// debianPackages names the Debian package of the programs the tests run
// whose package is not called as the program is (.ci/run installs them all).
var debianPackages = map[string]string{
	"aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu", "s390x-linux-gnu-gcc": "gcc-s390x-linux-gnu",
	"aarch64-linux-gnu-g++": "g++-aarch64-linux-gnu", "s390x-linux-gnu-g++": "g++-s390x-linux-gnu",
	"qemu-aarch64": "qemu-user", "qemu-s390x": "qemu-user", "qemu-aarch64_be": "qemu-user",
	"eu-stack": "elfutils", "eu-readelf": "elfutils", "eu-unstrip": "elfutils",
	"ninja": "ninja-build", "rpmbuild": "rpm", "dpkg-buildpackage": "dpkg-dev", "dh": "debhelper",
	"script": "util-linux", "setpriv": "util-linux", "setcap": "libcap2-bin", "getcap": "libcap2-bin",
	"getfacl": "acl", "setfacl": "acl", "getfattr": "attr", "setfattr": "attr",
	"objdump": "binutils", "readelf": "binutils", "strip": "binutils", "ld": "binutils", "as": "binutils",
	"mkfs.xfs": "xfsprogs", "autoreconf": "autoconf", "man": "man-db",
}

// InstallHint says how to get the program name the tests run: the Debian
// package that has it (.ci/run installs every one of them).
func InstallHint(name string) string {
	name = filepath.Base(name)
	pkg, ok := debianPackages[name]
	if !ok {
		pkg = name
	}
	return "install Debian's " + pkg + " (.ci/run installs every tool the tests use)"
}

// NeedProgram returns the path of the program name in $PATH; it skips t
// (fails it under CI=true) when there is none, saying what to install.
func NeedProgram(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		NeedInput(t, "%s not found in $PATH: %s", name, InstallHint(name))
	}
	return p
}

// GNURefInstall is the command that installs the GNU reference binutils
// (2.46 or newer: as --gsframe, ld, objdump and readelf --sframe, for
// x86-64, AArch64 and s390x) and points the tests at them.
const GNURefInstall = "export GNU_SFRAME_REF=$(testdata/gnu-sframe-ref.sh)"

// GNURefDir returns the directory of the GNU reference tools' wrappers
// (ARCH-as, ARCH-objdump, ...): $GNU_SFRAME_REF, else where
// testdata/gnu-sframe-ref.sh installs them by default,
// $HOME/.cache/gnu-sframe-ref/bin.
func GNURefDir() string {
	if d := os.Getenv("GNU_SFRAME_REF"); d != "" {
		return d
	}
	home := os.Getenv("HOME")
	if home == "" {
		home = "/root"
	}
	return filepath.Join(home, ".cache", "gnu-sframe-ref", "bin")
}

// GNURefTool returns the path of the GNU reference tool name
// ("x86_64-objdump"); it skips t (fails it under CI=true) when the tool is
// missing, saying how to install it.
func GNURefTool(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(GNURefDir(), name)
	if _, err := os.Stat(p); err != nil {
		NeedInput(t, "GNU reference tool %s missing: %s", p, GNURefInstall)
	}
	return p
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
