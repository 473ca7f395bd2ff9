package main

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// setPhdrFlags sets p_flags of the program headers of type typ in the
// little-endian ELF64 file at path.
func setPhdrFlags(t *testing.T, path string, typ elf.ProgType, flags elf.ProgFlag) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	o := binary.LittleEndian
	phoff, phnum := o.Uint64(b[32:]), int(o.Uint16(b[56:]))
	found := false
	for i := 0; i < phnum; i++ {
		e := b[phoff+uint64(i)*56:]
		if elf.ProgType(o.Uint32(e)) == typ {
			o.PutUint32(e[4:], uint32(flags))
			found = true
		}
	}
	if !found {
		t.Fatalf("%s: no %v", path, typ)
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// progFlags returns the flags of the first program header of type typ.
func progFlags(t *testing.T, path string, typ elf.ProgType) elf.ProgFlag {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == typ {
			return p.Flags
		}
	}
	t.Fatalf("%s: no %v", path, typ)
	return 0
}

// TestGeneratePhdrExec: what generate writes into an executable whose
// PT_PHDR has PF_X (old linkers wrote PF_R|PF_X; the Linux kernel registers
// the SFrame section for every PF_X header, so that header could take the
// text's place), verify accepts: PF_X is cleared from PT_PHDR, -v says so,
// the program still runs, a second run writes nothing. Inputs: Go's old
// gcc executable (debug/elf testdata), and gcc's programs (PIE, and
// non-PIE with the header table inside the executable PT_LOAD) given
// PF_R|PF_X on PT_PHDR. Both forms (one FILE, the batch) are checked.
func TestGeneratePhdrExec(t *testing.T) {
	gcc := sysfiles.NeedProgram(t, "gcc")
	td := testdataDir()
	cases := []struct {
		name  string
		build func(t *testing.T, out string)
		runs  bool
	}{
		{name: "go-testdata-gcc-exec", build: func(t *testing.T, out string) {
			old := filepath.Join(runtime.GOROOT(), "src/debug/elf/testdata/gcc-amd64-linux-exec")
			if _, err := os.Stat(old); err != nil {
				t.Fatalf("Go's old executable: %v", err)
			}
			copyFile(t, old, out)
		}},
		{name: "pie", runs: true, build: func(t *testing.T, out string) {
			gccBuild(t, gcc, out, "-O2", "-pie", "-fPIE", filepath.Join(td, "link/src/main.c"))
			setPhdrFlags(t, out, elf.PT_PHDR, elf.PF_R|elf.PF_X)
		}},
		{name: "nopie-noseparate-code", runs: true, build: func(t *testing.T, out string) {
			gccBuild(t, gcc, out, "-O2", "-no-pie", "-Wl,-z,noseparate-code", filepath.Join(td, "link/src/main.c"))
			setPhdrFlags(t, out, elf.PT_PHDR, elf.PF_R|elf.PF_X)
		}},
	}
	for _, c := range cases {
		for _, batch := range []bool{false, true} {
			name := c.name + "/file"
			if batch {
				name = c.name + "/batch"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "prog")
				c.build(t, p)
				var want string
				if c.runs {
					want = runProgram(t, p)
				}
				args := []string{"-v", p}
				if batch {
					args = []string{"-v", dir}
				}
				_, stderr, code := runCLI(args...)
				if code != exitOK || !strings.Contains(stderr, "PF_X cleared from PT_PHDR") {
					t.Errorf("generate: exit %d, want 0 and PF_X cleared from PT_PHDR:\n%s", code, stderr)
				}
				if fl := progFlags(t, p, elf.PT_PHDR); fl&elf.PF_X != 0 {
					t.Errorf("PT_PHDR flags %v after generate", fl)
				}
				if stdout, stderr, code := runCLI("verify", p); code != exitOK {
					t.Errorf("verify: exit %d:\n%s%s", code, stdout, stderr)
				}
				if c.runs {
					if got := runProgram(t, p); got != want {
						t.Errorf("patched program prints %q, want %q", got, want)
					}
				}
				before, _ := os.ReadFile(p)
				if _, stderr, code := runCLI(args...); code != exitOK {
					t.Errorf("second run: exit %d:\n%s", code, stderr)
				}
				if after, _ := os.ReadFile(p); string(after) != string(before) {
					t.Errorf("second run rewrote the file")
				}
			})
		}
	}
}

// TestGenerateExecStack: generate and verify agree on a program whose
// PT_GNU_STACK has PF_X (-z execstack, kept: the stack stays executable),
// by what the Linux kernel's SFrame registration does with it
// (verify.ExecHeaders). As linkers place it, after the PT_LOADs, the
// kernel refuses its registration (text address 0, or a range already
// registered for the text) and the text's stands: generate patches it
// with no warning, exit 0, and verify passes with a note saying why.
// Moved before an executable PT_LOAD it overlaps (a PIE whose first
// PT_LOAD is the text, -z noseparate-code), its registration would come
// first and the text's be refused: generate says so, exits non-zero and
// leaves the file as it was, and verify of such a file, patched before
// the move, reports the problem.
func TestGenerateExecStack(t *testing.T) {
	gcc := sysfiles.NeedProgram(t, "gcc")
	src := filepath.Join(testdataDir(), "link/src/main.c")
	for _, batch := range []bool{false, true} {
		for _, pie := range []string{"-pie", "-no-pie"} {
			dir := t.TempDir()
			p := filepath.Join(dir, "prog")
			gccBuild(t, gcc, p, "-O2", pie, "-z", "execstack", src)
			want := runProgram(t, p)
			arg := p
			if batch {
				arg = dir
			}
			_, stderr, code := runCLI(arg)
			if code != exitOK || strings.Contains(stderr, "PF_X") {
				t.Errorf("generate %s %s: exit %d, want 0 and no word of PF_X:\n%s", pie, arg, code, stderr)
			}
			if fl := progFlags(t, p, elf.PT_GNU_STACK); fl&elf.PF_X == 0 {
				t.Errorf("PT_GNU_STACK lost PF_X: %v", fl)
			}
			stdout, _, code := runCLI("verify", p)
			if code != exitOK || !strings.Contains(stdout, "note: program header") || !strings.Contains(stdout, "(PT_GNU_STACK) has PF_X: the kernel refuses its registration") {
				t.Errorf("verify %s: exit %d, want 0 and a note on PT_GNU_STACK:\n%s", pie, code, stdout)
			}
			if got := runProgram(t, p); got != want {
				t.Errorf("patched program printed %q, want %q", got, want)
			}
		}
	}
	// PT_GNU_STACK before the text PT_LOAD of a PIE whose first PT_LOAD
	// is the text.
	dir := t.TempDir()
	p := filepath.Join(dir, "prog")
	gccBuild(t, gcc, p, "-O2", "-pie", "-z", "execstack", "-z", "noseparate-code", src)
	patched := filepath.Join(dir, "patched")
	copyFile(t, p, patched)
	if _, stderr, code := runCLI(patched); code != exitOK {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	for _, f := range []string{p, patched} {
		stackFirst(t, f)
	}
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(p)
	if code == exitOK || !strings.Contains(stderr, "(PT_GNU_STACK) has PF_X: the kernel registers the section for it before program header") {
		t.Errorf("generate, PT_GNU_STACK first: exit %d, want a failure saying the text would not be registered:\n%s", code, stderr)
	}
	if after, err := os.ReadFile(p); err != nil || string(after) != string(before) {
		t.Errorf("generate, PT_GNU_STACK first: the file changed (%v)", err)
	}
	stdout, _, code := runCLI("verify", patched)
	if code == exitOK || !strings.Contains(stdout, "(PT_GNU_STACK) has PF_X: the kernel registers the section for it before program header") {
		t.Errorf("verify, PT_GNU_STACK first: exit %d, want the problem:\n%s", code, stdout)
	}
}

// stackFirst moves PT_GNU_STACK of the little-endian ELF64 file at path
// to the front of its program header table, before PT_PHDR and every
// PT_LOAD (the other entries keep their order).
func stackFirst(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	o := binary.LittleEndian
	phoff, phnum := o.Uint64(b[32:]), int(o.Uint16(b[56:]))
	table := b[phoff : phoff+uint64(phnum)*56]
	for i := 0; i < phnum; i++ {
		if elf.ProgType(o.Uint32(table[i*56:])) == elf.PT_GNU_STACK {
			stack := append([]byte(nil), table[i*56:(i+1)*56]...)
			copy(table[56:(i+1)*56], table[:i*56])
			copy(table, stack)
			if err := os.WriteFile(path, b, 0o755); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s: no PT_GNU_STACK", path)
}

// gccBuild runs gcc with args, writing out.
func gccBuild(t *testing.T, gcc, out string, args ...string) {
	t.Helper()
	if msg, err := exec.Command(gcc, append(args, "-o", out)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, msg)
	}
}

// runProgram runs a native program and returns its output.
func runProgram(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, out)
	}
	return string(out)
}
