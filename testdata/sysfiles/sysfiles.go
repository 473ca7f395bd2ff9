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

// NeedInput skips t (fails it under CI=true) because an input is missing:
// the one place the tests decide between skipping and failing. format says
// what is missing and what to install or run.
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
	"perf": "linux-perf", "callgrind_annotate": "valgrind",
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

// NeedProgram returns the path of the program name in $PATH (name itself
// when it holds a slash and is there); it skips t
// (fails it under CI=true) when there is none, saying what to install.
func NeedProgram(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil && strings.Contains(name, "/") {
		NeedInput(t, "%s not found", name)
	}
	if err != nil {
		NeedInput(t, "%s not found in $PATH: %s", name, InstallHint(name))
	}
	return p
}

// A Ref is one install of GNU binutils the tests compare against: its
// wrappers ARCH-NAME (x86_64-objdump, aarch64-as, ...) in a bin directory,
// PREFIX/gcc-ARCH for gcc -B, and PREFIX/root, the unpacked packages
// (libsframe and sframe-api.h).
type Ref struct {
	env     string // the variable naming the bin directory
	name    string // the default prefix's name below $HOME/.cache
	Install string // the command that installs it and sets env
}

// GNURef is the reference binutils (2.46 or newer: as --gsframe, ld,
// objdump and readelf --sframe, for x86-64, AArch64 and s390x) that
// testdata/gnu-sframe-ref.sh installs.
var GNURef = Ref{"GNU_SFRAME_REF", "gnu-sframe-ref", "export GNU_SFRAME_REF=$(testdata/gnu-sframe-ref.sh)"}

// GNUOld is binutils 2.44 (SFrame version 2 only) with its libsframe,
// which testdata/gnu-old-ref.sh installs.
var GNUOld = Ref{"GNU_OLD_REF", "gnu-old-ref", "export GNU_OLD_REF=$(testdata/gnu-old-ref.sh)"}

// Dir returns the directory of r's wrappers: $GNU_SFRAME_REF (GNURef) or
// $GNU_OLD_REF (GNUOld), else where the install script puts them by
// default, $HOME/.cache/NAME/bin.
func (r Ref) Dir() string {
	if d := os.Getenv(r.env); d != "" {
		return d
	}
	home := os.Getenv("HOME")
	if home == "" {
		home = "/root"
	}
	return filepath.Join(home, ".cache", r.name, "bin")
}

// Prefix returns the directory r was installed into (Dir's parent), which
// holds gcc-ARCH and root.
func (r Ref) Prefix() string { return filepath.Dir(r.Dir()) }

// GCC returns the directory that makes arch's cross gcc assemble and link
// with r's tools (gcc -B DIR); it skips t (fails it under CI=true) when
// the directory is missing, saying how to install it.
func (r Ref) GCC(t testing.TB, arch string) string {
	t.Helper()
	p := filepath.Join(r.Prefix(), "gcc-"+arch)
	if _, err := os.Stat(p); err != nil {
		NeedInput(t, "GNU reference tools' %s missing: %s", p, r.Install)
	}
	return p
}

// Tool returns the path of r's tool name for arch ("x86_64", "objdump":
// Dir()/x86_64-objdump); it skips t (fails it under CI=true) when the tool
// is missing, saying how to install it.
func (r Ref) Tool(t testing.TB, arch, name string) string {
	t.Helper()
	p := filepath.Join(r.Dir(), arch+"-"+name)
	if _, err := os.Stat(p); err != nil {
		NeedInput(t, "GNU reference tool %s missing: %s", p, r.Install)
	}
	return p
}

// NeedRoot skips t (fails it under CI=true, which runs as root) unless the
// tests run as root; why says what needs it.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		NeedInput(t, "needs root (%s): run the tests as root, as .ci/run does", why)
	}
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
// at hand), or "" when it has none, saying so in t's log: tests add it to
// their inputs where it is. CI does not install LLVM.
func BigLib(t testing.TB) string {
	t.Helper()
	libs := LdconfigLibs("libLLVM")
	if len(libs) == 0 {
		t.Log("no libLLVM in ldconfig -p: the big-library case is not run")
		return ""
	}
	return libs[len(libs)-1]
}

// A Package is a package of the module's library.
type Package struct {
	Dir        string // relative to the working directory: "." for the root, "emit/unwind"
	ImportPath string
	Name       string
}

// LibraryPackages returns the packages of the library of the module in the
// working directory as go list ./... finds them, the commands (package
// main) left out, so that tests that check every package (doc comments,
// documents' code) cover a new one without naming it.
func LibraryPackages(t testing.TB) []Package {
	t.Helper()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}} {{.Dir}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []Package
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			t.Fatalf("go list ./...: line %q", line)
		}
		if f[0] == "main" {
			continue
		}
		dir, err := filepath.Rel(root, f[2])
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, Package{Dir: dir, ImportPath: f[1], Name: f[0]})
	}
	if len(pkgs) == 0 {
		t.Fatal("go list ./... found no library package")
	}
	return pkgs
}
