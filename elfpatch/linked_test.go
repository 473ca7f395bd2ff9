package elfpatch

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

const helloC = `#include <stdio.h>
static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
int main(int argc, char **argv) { printf("hello %d\n", fact(argc + 4)); return 0; }
`

// helloS390xNoLibc is helloC's program, printing what helloC prints when
// run without arguments, without a C library: a static PIE for s390x,
// whose cross C library in Debian has no rcrt1.o (the start file of a
// static PIE).
const helloS390xNoLibc = `static long sys3(long n, long a, long b, long c)
{
	register long r1 __asm__("r1") = n;
	register long r2 __asm__("r2") = a;
	register long r3 __asm__("r3") = b;
	register long r4 __asm__("r4") = c;
	__asm__ volatile("svc 0" : "+r"(r2) : "r"(r1), "r"(r3), "r"(r4) : "memory");
	return r2;
}
static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
void _start(void)
{
	static const char digits[] = "0123456789";
	char msg[] = "hello ???\n";
	int f = fact(5);
	msg[6] = digits[f / 100 % 10];
	msg[7] = digits[f / 10 % 10];
	msg[8] = digits[f % 10];
	sys3(4, 1, (long)msg, sizeof msg - 1); /* write */
	sys3(1, 0, 0, 0);                      /* exit */
	for (;;) {
	}
}
`

// manyC returns a C program with n functions, whose SFrame section does not
// fit in the free space after any PT_LOAD.
func manyC(n int) string {
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "__attribute__((noinline)) int f%d(int x) { volatile int a[4]; a[0] = x; return a[0] + %d; }\n", i, i)
	}
	b.WriteString("int main(void) { int s = 0;\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "s += f%d(%d);\n", i, i)
	}
	b.WriteString("printf(\"hello %d\\n\", s); return 0; }\n")
	return b.String()
}

type target struct {
	arch, gcc string
	qemu      string // runner (qemu-user); "" for native
	tool      string // reference tool prefix
}

func targets(t *testing.T) []target {
	return []target{
		{arch: "x86_64", gcc: "gcc", tool: "x86_64"},
		{arch: "aarch64", gcc: "aarch64-linux-gnu-gcc", qemu: "qemu-aarch64", tool: "aarch64"},
		{arch: "s390x", gcc: "s390x-linux-gnu-gcc", qemu: "qemu-s390x", tool: "s390x"},
	}
}

// build compiles src with the reference binutils, with and without
// --gsframe, and returns both outputs.
func (tg target) build(t *testing.T, dir, name, src string, flags ...string) (gs, plain string) {
	t.Helper()
	sysfiles.NeedProgram(t, tg.gcc)
	bdir := sysfiles.GNURef.GCC(t, tg.arch)
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	gs, plain = filepath.Join(dir, name+".gs"), filepath.Join(dir, name)
	base := append([]string{"-B", bdir, "-O1", "-Wl,-z,separate-code"}, flags...)
	run(t, tg.gcc, append(base, "-Wa,--gsframe", "-o", gs, c)...)
	run(t, tg.gcc, append(base, "-o", plain, c)...)
	return gs, plain
}

func (tg target) exec(t *testing.T, bin string, args ...string) string {
	t.Helper()
	if tg.qemu != "" {
		args = append([]string{"-L", qemuPrefix(t, tg.gcc), bin}, args...)
		bin = sysfiles.NeedProgram(t, tg.qemu)
	}
	out, _ := run(t, bin, args...)
	return out
}

// patchFile patches in to out with sec (valid at secAddr), re-anchored to
// wherever PatchLinked puts it.
func patchFile(t *testing.T, in, out string, sec []byte, secAddr uint64) Layout {
	t.Helper()
	fi, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer fi.Close()
	fo, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer fo.Close()
	lay, err := PatchLinked(fi, fo, len(sec), func(addr uint64) ([]byte, error) {
		return rebase(sec, secAddr, addr)
	})
	if err != nil {
		t.Fatalf("PatchLinked %s: %v", in, err)
	}
	return lay
}

// sectionOf returns the bytes and address of a section of an ELF file.
func sectionOf(t *testing.T, path, name string) ([]byte, uint64) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(name)
	if s == nil {
		t.Fatalf("%s: no %s", path, name)
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b, s.Addr
}

// checkELF runs readelf -lW -SW and fails on any warning.
func checkELF(t *testing.T, tg target, path string) {
	t.Helper()
	out, errs := run(t, sysfiles.GNURef.Tool(t, tg.tool, "readelf"), "-lSW", path)
	if errs != "" || strings.Contains(strings.ToLower(out), "warning") {
		t.Errorf("readelf -lSW %s warns:\n%s%s", path, errs, out)
	}
	if n := strings.Count(out, "GNU_SFRAME"); n != 2 { // program header + section type
		t.Errorf("readelf -lSW %s: %d GNU_SFRAME lines, want 2\n%s", path, n, out)
	}
}

// elflintCount returns the number of eu-elflint findings for path.
func elflintCount(t *testing.T, path string) int {
	cmd := exec.Command("eu-elflint", "--gnu-ld", path)
	out, _ := cmd.CombinedOutput()
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "No errors") {
			n++
		}
	}
	return n
}

func TestPatchLinkedTwins(t *testing.T) {
	kinds := []struct {
		name, src string
		flags     []string
		newLoad   string // "yes", "no", or "any"
		// otherText: the twins' text addresses differ (the GNU build's
		// extra program header shifts everything), so the dumps cannot
		// be compared.
		otherText bool
	}{
		{"pie", helloC, []string{"-fPIE", "-pie"}, "no", false},
		{"exec", helloC, []string{"-no-pie"}, "no", false},
		{"many", manyC(150), []string{"-fPIE", "-pie"}, "yes", false},
		// Static: the build-id note frees 40 bytes, less than an entry.
		{"static", helloC, []string{"-static"}, "any", false},
		{"static-pie", helloC, []string{"-static-pie"}, "any", false},
		{"noseparate", helloC, []string{"-fPIE", "-pie", "-Wl,-z,noseparate-code"}, "yes", true},
	}
	for _, tg := range targets(t) {
		for _, k := range kinds {
			t.Run(tg.arch+"/"+k.name, func(t *testing.T) {
				if testing.Short() && k.name != "pie" && k.name != "many" {
					t.Skip("-short: pie and many only, the other kinds of program run in make test-long")
				}
				src, flags := k.src, k.flags
				if k.name == "static-pie" {
					sysfiles.NeedProgram(t, tg.gcc)
					if out, _ := exec.Command(tg.gcc, "-print-file-name=rcrt1.o").Output(); !filepath.IsAbs(strings.TrimSpace(string(out))) {
						// Debian's s390x cross C library cannot link a
						// static PIE: the program without one.
						if tg.arch != "s390x" {
							t.Fatalf("%s has no rcrt1.o: its C library cannot link a static PIE, and the test has no program without one for %s", tg.gcc, tg.arch)
						}
						src, flags = helloS390xNoLibc, append(slices.Clip(flags), "-nostdlib")
					}
				}
				dir := t.TempDir()
				gs, plain := tg.build(t, dir, k.name, src, flags...)
				sec, addr := sectionOf(t, gs, ".sframe")
				ours := filepath.Join(dir, k.name+".ours")
				lay := patchFile(t, plain, ours, sec, addr)
				t.Logf("%+v", lay)
				// 64 KiB pages leave room on aarch64.
				if k.newLoad != "any" && lay.NewLoad != (k.newLoad == "yes") && tg.arch != "aarch64" {
					t.Errorf("NewLoad = %v, want %v", lay.NewLoad, k.newLoad)
				}
				if b, err := os.ReadFile(ours); err != nil {
					t.Fatal(err)
				} else if err := checkInvariants(b, len(sec)); err != nil {
					t.Error(err)
				}
				want := tg.exec(t, plain)
				if (src == helloC || src == helloS390xNoLibc) && want != "hello 120\n" {
					t.Fatalf("the program as built prints %q, want %q", want, "hello 120\n")
				}
				if got := tg.exec(t, ours); got != want {
					t.Errorf("patched program prints %q, want %q", got, want)
				}
				checkELF(t, tg, ours)
				// Program header order as ld makes it (one more PT_LOAD
				// when the section needed a new one).
				if got, want := progTypes(t, ours, lay.NewLoad), progTypes(t, gs, false); got != want && !k.otherText {
					t.Errorf("program headers\n got %s\nwant %s", got, want)
				}
				od := sysfiles.GNURef.Tool(t, tg.tool, "objdump")
				if got, want := sframeText(t, od, ours), sframeText(t, od, gs); got != want && !k.otherText {
					t.Errorf("objdump --sframe differs:\n got:\n%s\nwant:\n%s", got, want)
				}
				// Second patch of our output: byte-identical.
				again := filepath.Join(dir, k.name+".again")
				lay2 := patchFile(t, ours, again, sec, addr)
				if !lay2.InPlace && !lay2.Replaced {
					t.Errorf("second patch neither in place nor as from the input: %+v", lay2)
				}
				b1, _ := os.ReadFile(ours)
				b2, _ := os.ReadFile(again)
				if !bytes.Equal(b1, b2) {
					t.Errorf("second patch differs from the first")
				}
				// strip and objcopy round trips still run and keep SFrame.
				for _, tool := range []string{"strip", "objcopy"} {
					if lay.PhdrsMoved && tg.qemu != "" {
						// BFD re-lays out a moved table so that only the
						// kernel's (>= 5.18) AT_PHDR finds it, not qemu's;
						// see docs/elfpatch.md.
						continue
					}
					rt := filepath.Join(dir, k.name+"."+tool)
					if tool == "strip" {
						run(t, sysfiles.GNURef.Tool(t, tg.tool, tool), "-o", rt, ours)
					} else {
						run(t, sysfiles.GNURef.Tool(t, tg.tool, tool), ours, rt)
					}
					if got := tg.exec(t, rt); got != want {
						t.Errorf("after %s the program prints %q, want %q", tool, got, want)
					}
					checkELF(t, tg, rt)
				}
				if sysfiles.NeedProgram(t, "eu-elflint") != "" {
					// elflint does not know the SFrame types: compare with
					// GNU's own build, which has the same two findings.
					if a, b := elflintCount(t, gs), elflintCount(t, ours); b > a {
						out, _ := exec.Command("eu-elflint", "--gnu-ld", ours).CombinedOutput()
						t.Errorf("eu-elflint: %d findings, GNU build %d:\n%s", b, a, out)
					}
				}
			})
		}
	}
}

// progTypes lists the program header types of path, dropping the last
// PT_LOAD if dropLoad.
func progTypes(t *testing.T, path string, dropLoad bool) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	last := -1
	for i, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			last = i
		}
	}
	var b strings.Builder
	for i, p := range f.Progs {
		if dropLoad && i == last {
			continue
		}
		fmt.Fprintf(&b, "%#x ", uint32(p.Type))
	}
	return b.String()
}

// TestNonZero checks the word-at-a-time scan of planner.zeros against a
// byte loop: every length up to 40, a non-zero byte at every place or none.
func TestNonZero(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for at := 0; at <= n; at++ {
			b := make([]byte, n)
			if at < n {
				b[at] = 0x80
				if at+1 < n {
					b[at+1] = 1 // bytes past the first do not matter
				}
			}
			if got := nonZero(b); got != at {
				t.Errorf("nonZero of %d bytes, the first non-zero at %d: %d", n, at, got)
			}
		}
	}
}
