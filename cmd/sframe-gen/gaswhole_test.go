package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// ldRelocatable names the committed objects testdata/regen.sh makes with
// ld -r: ld, not as, wrote them (and their twins), so they are not gas's
// output and their .sframe is ld's merge of the inputs'.
func ldRelocatable(obj string) bool {
	name := strings.TrimSuffix(filepath.Base(obj), ".o")
	return name == "relocatable" || name == "leveldb"
}

// TestGenerateObjectsWhole runs `sframe-gen --gas-compat -o` on every
// committed object GNU as made without --gsframe and compares the whole
// output with the object as --gsframe made from the same source, byte for
// byte (what `cmp` does), on x86-64, AArch64 (both byte orders) and s390x.
// The objects left out are those ld -r made and those where gas dropped a
// function for .cfi_label (a known difference of the section itself,
// docs/lower.md).
func TestGenerateObjectsWhole(t *testing.T) {
	dir := t.TempDir()
	same := 0
	arches := map[string]int{}
	for i, p := range objectPairs(t) {
		in := p[0]
		if ldRelocatable(in) || labelDropped(t, in) {
			continue
		}
		twin := strings.TrimSuffix(in, ".o") + ".gs.o"
		want, err := os.ReadFile(twin)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprintf("%d.o", i))
		if _, stderr, code := runCLI("--gas-compat", "-o", out, in); code != 0 {
			t.Errorf("%s: exit %d: %s", in, code, stderr)
			continue
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: sframe-gen --gas-compat -o differs from %s (%d bytes, want %d)", in, twin, len(got), len(want))
			continue
		}
		same++
		rel, _ := filepath.Rel(testdataDir(), in)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		arches[parts[1]]++
		// A run on gas's own object writes nothing.
		if _, stderr, code := runCLI("--gas-compat", "-o", out, twin); code != 0 {
			t.Errorf("%s: exit %d: %s", twin, code, stderr)
		} else if again, _ := os.ReadFile(out); !bytes.Equal(again, want) {
			t.Errorf("%s: sframe-gen --gas-compat changes as --gsframe's own object", twin)
		}
	}
	for _, a := range []string{"x86_64", "aarch64", "aarch64_be", "s390x"} {
		if arches[a] == 0 {
			t.Errorf("no object of %s compared", a)
		}
	}
	t.Logf("%d objects identical to as --gsframe's: %v", same, arches)
}

// sectionBytes returns the contents of the section name of the ELF file
// path (nil if it has none).
func sectionBytes(t *testing.T, path, name string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(name)
	if s == nil {
		return nil
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPatchedObjectsLinkAndRun links the committed gas objects of
// testdata/link, patched in both modes, into a shared library and a PIE
// with gcc and the reference ld, and runs the program (natively on x86-64,
// under qemu-user elsewhere): its output is the unpatched build's, and ld
// merged every object's .sframe (objdump --sframe of the program lists
// every function of both objects).
func TestPatchedObjectsLinkAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs programs of three ABIs (-short)")
	}
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			cc := "gcc"
			var runner []string
			if arch != "x86_64" || runtime.GOARCH != "amd64" {
				cc = arch + "-linux-gnu-gcc"
				runner = []string{sysfiles.NeedProgram(t, "qemu-"+arch), "-L", qemuPrefix(t, arch)}
			}
			cc = sysfiles.NeedProgram(t, cc)
			od := sysfiles.GNURef.Tool(t, arch, "objdump")
			bdir := filepath.Join(filepath.Dir(filepath.Dir(od)), "gcc-"+arch)
			src := filepath.Join(testdataDir(), "link", arch)
			build := func(dir string, patch []string) string {
				objs := map[string]string{}
				for _, o := range []string{"demo.pic.o", "main.pie.o"} {
					objs[o] = filepath.Join(src, o)
					if patch != nil {
						objs[o] = filepath.Join(dir, o)
						args := append(append([]string{}, patch...), "-o", objs[o], filepath.Join(src, o))
						if _, stderr, code := runCLI(args...); code != 0 {
							t.Fatalf("%v: exit %d: %s", args, code, stderr)
						}
					}
				}
				lib, exe := filepath.Join(dir, "libdemo.so"), filepath.Join(dir, "pie.exe")
				for _, args := range [][]string{
					{"-B", bdir, "-shared", "-Wl,-soname,libdemo.so", objs["demo.pic.o"], "-o", lib},
					{"-B", bdir, "-pie", objs["main.pie.o"], lib, "-o", exe},
				} {
					if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
						t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
					}
				}
				if patch != nil {
					dump, err := exec.Command(od, "--sframe", exe).CombinedOutput()
					if err != nil || !bytes.Contains(dump, []byte("Num FDEs")) {
						t.Errorf("%s: objdump --sframe: %v\n%s", exe, err, dump)
					}
				}
				args := append(append([]string{}, runner...), exe, "3")
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
				if len(runner) > 0 {
					cmd.Args = append([]string{args[0], "-E", "LD_LIBRARY_PATH=" + dir}, args[1:]...)
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("%s: %v\n%s", exe, err, out)
				}
				return string(out)
			}
			want := build(t.TempDir(), nil)
			for _, mode := range [][]string{{"--gas-compat"}, {}} {
				if got := build(t.TempDir(), mode); want == "" || got != want {
					t.Errorf("patched %v: output %q, unpatched %q", mode, got, want)
				}
			}
		})
	}
}
