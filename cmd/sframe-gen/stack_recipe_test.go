package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// recipeProgram is the C program TestStackReadmeRecipe follows the
// README's recipe on: its stack crosses the C library in the middle
// (qsort calls back into the program), and it links libm.
const recipeProgram = `#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int compare(const void *a, const void *b) {
	static int done;
	if (!done++)
		pause();
	return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv) {
	int v[] = {3, 1, 2};
	qsort(v, 3, sizeof v[0], compare);
	printf("%f\n", sqrt((double)argc));
	return 0;
}
`

// readmeRecipe returns the shell lines of the README's "Check that your
// binaries unwind".
func readmeRecipe(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Check that your binaries unwind")
	if ok {
		_, after, ok = strings.Cut(after, "```\n")
	}
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 || !strings.Contains(block, "sframe-gen stack core") {
		t.Fatal(`README.md: no recipe with "sframe-gen stack core" in "Check that your binaries unwind"`)
	}
	return block
}

// TestStackReadmeRecipe follows the README's recipe literally (bash, the
// built sframe-gen first in $PATH) on a C program: the walk of the core
// must be whole (end: outermost frame) and every frame's PC gdb's. Then
// the same program run with the system's libraries: the walk ends in the
// C library, and the end names it and says how to give it SFrame.
func TestStackReadmeRecipe(t *testing.T) {
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("the recipe runs on x86-64 Linux")
	}
	gcc := sysfiles.NeedProgram(t, "gcc")
	sysfiles.NeedProgram(t, "gdb")
	sysfiles.NeedProgram(t, "ldd")
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	usesPID, _ := os.ReadFile("/proc/sys/kernel/core_uses_pid")
	if p := strings.TrimSpace(string(pattern)); p != "core" || strings.TrimSpace(string(usesPID)) == "1" {
		sysfiles.NeedInput(t, "the recipe needs cores written as ./core (core_pattern %q, core_uses_pid %s): as root, echo core > /proc/sys/kernel/core_pattern; echo 0 > /proc/sys/kernel/core_uses_pid", p, strings.TrimSpace(string(usesPID)))
	}
	recipe := readmeRecipe(t)
	bindir := filepath.Dir(buildCommand(t))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.c"), []byte(recipeProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(gcc, "-O2", "-o", "app", "app.c", "-lm")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	plain, err := os.ReadFile(filepath.Join(dir, "app"))
	if err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("bash", "-c", recipe)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "PATH="+bindir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, _ := sh.CombinedOutput() // kill -ABRT makes wait's status 134
	t.Logf("the recipe:\n%s\nprinted:\n%s", recipe, out)
	if !strings.Contains(string(out), "end: outermost frame") {
		t.Fatalf("the recipe's walk is not whole:\n%s", out)
	}
	core := filepath.Join(dir, "core")
	res, err := stackOfCore(core, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range res.Threads[0].Frames {
		seen[strings.TrimSuffix(f.Function, "_r")] = true
	}
	if !seen["compare"] || !seen["qsort"] || !seen["main"] || !seen["__libc_start_main"] {
		t.Errorf("the walk does not go from compare through qsort in the C library to main and __libc_start_main:\n%s", out)
	}
	abi := stackABIs()[0]
	tally := compareWithGDB(t, abi, filepath.Join(dir, "app"), []string{core})
	if len(tally.disagree) > 0 || len(tally.earlier) > 0 || tally.frames < 8 {
		t.Errorf("the recipe's walk is not gdb's (%d frames): %q %q", tally.frames, tally.disagree, tally.earlier)
	}

	// The program alone patched, the system's libraries as they are.
	if err := os.WriteFile(filepath.Join(dir, "app"), plain, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(core)
	sh = exec.Command("bash", "-c", `sframe-gen ./app && ulimit -c unlimited; ./app & sleep 1; kill -ABRT $!; wait`)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "PATH="+bindir+string(os.PathListSeparator)+os.Getenv("PATH"))
	sh.Run()
	var stdout, stderr bytes.Buffer
	c := &cli{stdout: &stdout, stderr: &stderr}
	if code := c.main([]string{"stack", core}); code != 0 {
		t.Fatalf("stack: exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	end := lines[len(lines)-1]
	if !strings.Contains(end, "end: module has no .sframe") || !strings.Contains(end, "libc.so.6: no .sframe section; give it SFrame: sframe-gen /") || !strings.Contains(end, "LD_LIBRARY_PATH=DIR") {
		t.Errorf("a walk ending in the system's C library: the end does not name it and say how to give it SFrame:\n%s", stdout.String())
	}
}

// TestStackQemuWithoutSysroot walks a qemu-user core of an AArch64 program
// linked as usual (its libraries at /lib in qemu's -L directory) without
// --sysroot: the end names each file not on this host and points at
// --sysroot, and --json's modules list them with the reason. With
// --sysroot the walk reaches the C library, which has no SFrame, and says
// how to give it.
func TestStackQemuWithoutSysroot(t *testing.T) {
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("runs qemu-user on x86-64 Linux")
	}
	abi := stackABIs()[1]
	cc := sysfiles.NeedProgram(t, abi.cc)
	qemu := sysfiles.NeedProgram(t, abi.qemu)
	sysroot := filepath.Dir(abi.libdir)
	raiseCoreLimit(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.c"), []byte(recipeProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app")
	if out, err := exec.Command(cc, "-O2", "-no-pie", "-o", app, filepath.Join(dir, "app.c"), "-lm").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	var stdout, stderr bytes.Buffer
	run := func(args ...string) string {
		t.Helper()
		stdout.Reset()
		stderr.Reset()
		c := &cli{stdout: &stdout, stderr: &stderr}
		if code := c.main(args); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr.String())
		}
		return stdout.String()
	}
	run(app)
	// qemu's -L: the guest's /lib is the cross C library's directory.
	guest := stackRun{bin: app, env: []string{"QEMU_LD_PREFIX=" + sysroot}, startup: 2 * time.Second, span: time.Millisecond}
	cores := stopProgram(t, stackABI{qemu: qemu}, guest, filepath.Join(dir, "stop"), 1)
	out := run("stack", cores[0])
	for _, want := range []string{"end: PC in no mapped module", "files the process maps are not on this host: ", "/libc.so.6", "--sysroot DIR"} {
		if !strings.Contains(out, want) {
			t.Errorf("without --sysroot: no %q in\n%s", want, out)
		}
	}
	var res stackResult
	if err := json.Unmarshal([]byte(run("stack", "--json", cores[0])), &res); err != nil {
		t.Fatal(err)
	}
	var listed bool
	for _, m := range res.Modules {
		if strings.HasSuffix(m.Name, "/libc.so.6") && !m.SFrame && strings.Contains(m.NoSFrame, "not on this host") && strings.Contains(m.NoSFrame, "--sysroot") {
			listed = true
		}
	}
	if !listed {
		t.Errorf("--json: modules do not list libc.so.6 as not on this host: %+v", res.Modules)
	}
	out = run("stack", "--sysroot", sysroot, cores[0])
	if !strings.Contains(out, "libc.so.6: no .sframe section; give it SFrame: sframe-gen "+sysroot) {
		t.Errorf("with --sysroot: the walk does not end at the C library, saying how to give it SFrame:\n%s", out)
	}
}
