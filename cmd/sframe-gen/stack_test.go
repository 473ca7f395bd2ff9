package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// nativeCore runs a patched program of testdata/stack, stops it with
// SIGABRT and returns its core, the program and its patched libraries.
func nativeCore(t testing.TB, prog stackProgram) (core, bin, libdir string) {
	t.Helper()
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("needs an x86-64 Linux host")
	}
	sysfiles.NeedProgram(t, "gcc")
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if p := strings.TrimSpace(string(pattern)); strings.ContainsAny(p, "|/%") {
		sysfiles.NeedInput(t, "core_pattern %q is not a plain file name: as root, echo core > /proc/sys/kernel/core_pattern", p)
	}
	raiseCoreLimit(t)
	abi := stackABIs()[0]
	dir := t.TempDir()
	libdir = patchedLibs(t, abi, dir)
	bin = buildStackProgram(t, abi, prog, dir, libdir)
	cores := stopProgram(t, abi, stackRun{bin: bin}, filepath.Join(dir, "stops"), 1)
	return cores[0], bin, libdir
}

// TestStackCommand runs sframe-gen stack on a core: the text (one line per
// frame as gdb prints it, the end), --json, --sysroot, and the errors.
func TestStackCommand(t *testing.T) {
	core, bin, libdir := nativeCore(t, stackPrograms[0])
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		c := &cli{stdout: &out, stderr: &errb}
		code := c.main(append([]string{"stack"}, args...))
		return out.String(), errb.String(), code
	}

	out, errs, code := run(core)
	frame := regexp.MustCompile(`^#\d+ +0x[0-9a-f]{16} (\S+) \((.+)\)$`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 4 || !strings.HasPrefix(lines[0], "TID ") {
		t.Fatalf("exit %d, stderr %q, output:\n%s", code, errs, out)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if !frame.MatchString(l) {
			t.Errorf("frame line %q is not #N 0xPC function+off (module)", l)
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "end: outermost frame") {
		t.Errorf("last line %q, want the walk's end", lines[len(lines)-1])
	}
	if !strings.Contains(out, "rec+0x") && !strings.Contains(out, "main+0x") {
		t.Errorf("no frame of the program's functions:\n%s", out)
	}

	js, _, code := run("--json", core)
	var res stackResult
	if err := json.Unmarshal([]byte(js), &res); err != nil || code != 0 || len(res.Threads) != 1 || !res.Threads[0].End.Complete {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, js)
	}

	// Another build of a program, its build ID another.
	other := buildStackProgram(t, stackABIs()[0], stackPrograms[1], t.TempDir(), libdir)

	// --sysroot: the files moved under a directory, as a cross-built
	// program's core is read on another machine.
	sysroot := t.TempDir()
	for _, p := range []string{bin, libdir} {
		dst := filepath.Join(sysroot, p)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Rename(p, dst); err != nil {
			t.Fatal(err)
		}
	}
	moved, _, _ := run(core)
	if strings.Contains(moved, "end: outermost frame") || !strings.Contains(moved, "module has no .sframe") || !strings.Contains(moved, "no such file") {
		t.Errorf("without --sysroot, the moved files were found:\n%s", moved)
	}
	withRoot, _, code := run("--sysroot", sysroot, core)
	if code != 0 || strings.Count(withRoot, "\n") != strings.Count(out, "\n") || !strings.Contains(withRoot, "end: outermost frame") {
		t.Errorf("--sysroot: exit %d:\n%s\nwant the frames of\n%s", code, withRoot, out)
	}
	// Another build at the program's place: its SFrame is not used (the
	// core holds the program's first page, with its build ID).
	inRoot := filepath.Join(sysroot, bin)
	if err := os.Rename(inRoot, inRoot+".saved"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(other); err != nil || os.WriteFile(inRoot, data, 0o755) != nil {
		t.Fatal(err)
	}
	wrong, _, _ := run("--sysroot", sysroot, core)
	if strings.Contains(wrong, "end: outermost frame") || !strings.Contains(wrong, "module has no .sframe") || !strings.Contains(wrong, "not the file the process ran: build ID ") {
		t.Errorf("--sysroot with another build of the program: the walk used it:\n%s", wrong)
	}
	if err := os.Rename(inRoot+".saved", inRoot); err != nil {
		t.Fatal(err)
	}

	// A core cut short in its notes.
	data, err := os.ReadFile(core)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.core")
	ef, err := elf.Open(core)
	if err != nil {
		t.Fatal(err)
	}
	noteEnd := 0
	for _, p := range ef.Progs {
		if p.Type == elf.PT_NOTE {
			noteEnd = int(p.Off + p.Filesz)
		}
	}
	ef.Close()
	os.WriteFile(cut, data[:noteEnd-16], 0o644)
	cutHeaders := filepath.Join(t.TempDir(), "headers.core")
	os.WriteFile(cutHeaders, data[:100], 0o644)

	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{filepath.Join(sysroot, bin)}, "not a core file", 1},
		{[]string{"stack_test.go"}, "stack_test.go: not an ELF file", 1},
		{[]string{"/nonexistent/core"}, "no such file", 1},
		{[]string{cut}, "cut.core: PT_NOTE at offset", 1},
		{[]string{cutHeaders}, "headers.core: program header table (offset 0x40, ", 1},
		{[]string{}, "expected exactly one CORE", 2},
		{[]string{"--pid", "1", core}, "expected exactly one CORE", 2},
	} {
		_, errs, code := run(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("stack %q: exit %d, stderr %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// TestStackExample builds the Example of package emit/unwind/target as a
// program (the core it walks its argument) and runs it on cores of the
// stack tests' programs: its frames (PC, SP, function and offset, module,
// signal) and ends must be those of sframe-gen stack --json, and the
// program under 30 lines.
func TestStackExample(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "emit", "unwind", "target", "example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	prog := string(src)
	for _, r := range [][2]string{
		{"package target_test", "package main"},
		{"import (", "import (\n\t\"os\""},
		{"func Example() {", "func main() {"},
		{`core := "core"`, "core := os.Args[1]"},
	} {
		if !strings.Contains(prog, r[0]) {
			t.Fatalf("example_test.go has no %q", r[0])
		}
		prog = strings.Replace(prog, r[0], r[1], 1)
	}
	if lines := strings.Count(prog, "\n"); lines >= 30 {
		t.Errorf("the Example is a program of %d lines, want under 30", lines)
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		"main.go": prog,
		"go.mod":  "module example\n\ngo 1.22\n\nrequire github.com/sframe-gen/sframe-gen v0.0.0\n\nreplace github.com/sframe-gen/sframe-gen => " + root + "\n",
		"go.sum":  string(sum),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "example")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the Example does not build as a program: %v\n%s\n%s", err, out, prog)
	}
	cores := 0
	for _, sp := range stackPrograms {
		if sp.name == "asmframe" {
			continue // the same walks as the others', its own assembly aside
		}
		core, _, _ := nativeCore(t, sp)
		out, err := exec.Command(exe, core).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: example: %v\n%s", sp.name, err, out)
		}
		var stdout, stderr bytes.Buffer
		c := &cli{stdout: &stdout, stderr: &stderr}
		if code := c.main([]string{"stack", "--json", core}); code != 0 {
			t.Fatalf("%s: stack --json: exit %d: %s", sp.name, code, stderr.String())
		}
		var res stackResult
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		frames := 0
		for _, th := range res.Threads {
			for _, f := range th.Frames {
				fmt.Fprintf(&want, "%d %#x sp %#x %s+%#x (%s) signal=%v\n", th.TID, f.PC, f.SP, f.Function, f.Offset, f.Module, f.Signal)
				frames++
			}
			fmt.Fprintf(&want, "%d end: %s\n", th.TID, th.End.Detail)
		}
		if string(out) != want.String() {
			t.Errorf("%s: the Example's walk of %s:\n%s\nsframe-gen stack --json's:\n%s", sp.name, core, out, want.String())
		}
		if frames < 2*len(res.Threads) {
			t.Errorf("%s: %d frames in %d threads: the walks compared hardly walk", sp.name, frames, len(res.Threads))
		}
		cores++
	}
	t.Logf("%d cores: the Example's frames are stack --json's", cores)
}
