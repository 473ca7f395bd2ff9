package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// Sources of the idempotence tree: NOBITS sections of several alignments
// (.bss, .tbss, -fdata-sections), COMDAT groups, and a program using them.
var idempotentSources = map[string]string{
	"bss.c":   "static char big[4096];\nchar *get(int i){return &big[i];}\n",
	"tls.c":   "static __thread char t[100] __attribute__((aligned(32)));\nstatic long b[5];\nint d = 7;\nchar *tls(int i){ t[i]++; b[i]++; return &t[i] + d; }\n",
	"tmpl.cc": "template <class T> struct S { static T v; T get(T x) { return x + v++; } };\ntemplate <class T> T S<T>::v;\ninline int twice(int x) { return 2 * x; }\nint use(int x) { S<int> s; S<long> l; return s.get(x) + l.get(x) + twice(x); }\n",
	"main.c":  "char *get(int); char *tls(int);\nint main(int c, char **v) { return *get(c) + *tls(c); }\n",
}

// idempotentCompiler is one ABI's compilers for the idempotence tree.
type idempotentCompiler struct {
	arch, cc, cxx string
	gsframe       bool // its assembler takes --gsframe (Debian 12's s390x one does not)
}

// buildIdempotentTree builds under dir, for each ABI, objects with NOBITS
// sections (gcc -O0 and -O2, -fdata-sections), with COMDAT groups (g++),
// with a .sframe from the assembler (--gsframe), an archive of them, a
// shared library and a program; and copies of the compilers' own static
// archives (libgcc.a). It returns the files the first run must patch.
func buildIdempotentTree(t *testing.T, dir string) []string {
	t.Helper()
	src := t.TempDir()
	for name, text := range idempotentSources {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var patched []string
	for _, c := range []idempotentCompiler{
		{"x86_64", "gcc", "g++", true},
		{"aarch64", "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", true},
		{"s390x", "s390x-linux-gnu-gcc", "s390x-linux-gnu-g++", false},
	} {
		cc, cxx := sysfiles.NeedProgram(t, c.cc), sysfiles.NeedProgram(t, c.cxx)
		out := filepath.Join(dir, c.arch)
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		build := func(tool, name string, args ...string) string {
			t.Helper()
			p := filepath.Join(out, name)
			if msg, err := exec.Command(tool, append(args, "-o", p)...).CombinedOutput(); err != nil {
				t.Fatalf("%s %v: %v\n%s", tool, args, err, msg)
			}
			patched = append(patched, c.arch+"/"+name)
			return p
		}
		s := func(name string) string { return filepath.Join(src, name) }
		objs := []string{
			build(cc, "bss.o", "-O2", "-fPIC", "-c", s("bss.c")),
			build(cc, "tls.o", "-O2", "-fPIC", "-fdata-sections", "-c", s("tls.c")),
			build(cxx, "tmpl.o", "-O0", "-fPIC", "-c", s("tmpl.cc")),
		}
		build(cc, "bss-O0.o", "-O0", "-c", s("bss.c"))
		if c.gsframe {
			build(cc, "gsframe.o", "-O2", "-Wa,--gsframe", "-c", s("bss.c"))
		}
		build(cc, "libidem.so", "-shared", objs[0], objs[1])
		build(cc, "prog", s("main.c"), objs[0], objs[1])
		ar := filepath.Join(out, "libidem.a")
		if msg, err := exec.Command(sysfiles.NeedProgram(t, "ar"), append([]string{"rcs", ar}, objs...)...).CombinedOutput(); err != nil {
			t.Fatalf("ar: %v\n%s", err, msg)
		}
		patched = append(patched, c.arch+"/libidem.a")
		// The compiler's own archive, as the system has it.
		if msg, err := exec.Command(cc, "-print-libgcc-file-name").Output(); err == nil {
			if p := strings.TrimSpace(string(msg)); filepath.IsAbs(p) {
				copyFile(t, p, filepath.Join(out, "libgcc.a"))
				patched = append(patched, c.arch+"/libgcc.a")
			}
		}
	}
	return patched
}

// TestBatchSecondRunWritesNothing: the first batch run's output is a fixed
// point. Over a tree of objects with NOBITS sections (each run moved .bss
// before: 0x60, 0x80, 0xc0, ...), with groups, with an assembler's
// .sframe, big-endian ones, archives of them (and libgcc.a), shared
// libraries and programs, a second run reports every file the first
// patched as up to date and changes no inode, time or byte.
func TestBatchSecondRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	want := buildIdempotentTree(t, dir)

	rep1 := filepath.Join(t.TempDir(), "report1.jsonl")
	if _, stderr, code := inDir(t, dir, "-q", "-j", "2", "--report", rep1, "."); code != exitOK {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	first := map[string]string{}
	for _, l := range readReport(t, rep1) {
		first[l.File] = l.Status
	}
	for _, rel := range want {
		if first[rel] != "patched" {
			t.Errorf("first run: %s is %q, want patched", rel, first[rel])
		}
	}
	after := treeState(t, dir)

	rep2 := filepath.Join(t.TempDir(), "report2.jsonl")
	if _, stderr, code := inDir(t, dir, "-q", "-j", "2", "--report", rep2, "."); code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	for _, l := range readReport(t, rep2) {
		if first[l.File] == "patched" && l.Status != "up-to-date" {
			t.Errorf("second run: %s is %q, want up-to-date", l.File, l.Status)
		}
	}
	again := treeState(t, dir)
	for rel, s := range after {
		if again[rel] != s {
			t.Errorf("second run changed %s", rel)
		}
	}
}
