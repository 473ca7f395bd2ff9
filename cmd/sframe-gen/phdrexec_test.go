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
	gcc := needTool(t, "gcc")
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

// TestGenerateWarnsExecStack: a program header other than PT_LOAD and
// PT_PHDR with PF_X (PT_GNU_STACK of an executable stack, which generate
// must keep) is what verify reports; generate says so in a warning once
// it has written the section (one FILE and the batch form).
func TestGenerateWarnsExecStack(t *testing.T) {
	gcc := needTool(t, "gcc")
	for _, batch := range []bool{false, true} {
		dir := t.TempDir()
		p := filepath.Join(dir, "prog")
		gccBuild(t, gcc, p, "-O2", "-z", "execstack", filepath.Join(testdataDir(), "link/src/main.c"))
		arg := p
		if batch {
			arg = dir
		}
		_, stderr, code := runCLI(arg)
		if code != exitOK || !strings.Contains(stderr, "warning: PT_GNU_STACK has PF_X") {
			t.Errorf("generate %s: exit %d, want 0 and a warning about PT_GNU_STACK:\n%s", arg, code, stderr)
		}
		if fl := progFlags(t, p, elf.PT_GNU_STACK); fl&elf.PF_X == 0 {
			t.Errorf("PT_GNU_STACK lost PF_X: %v", fl)
		}
		stdout, _, code := runCLI("verify", p)
		if code == exitOK || !strings.Contains(stdout, "(PT_GNU_STACK) has PF_X") {
			t.Errorf("verify: exit %d, want the PT_GNU_STACK problem:\n%s", code, stdout)
		}
	}
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
