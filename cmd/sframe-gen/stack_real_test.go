package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// stackRun is how a workload of the proof is started and stopped.
type stackRun struct {
	bin       string
	args, env []string
	// startup and span replace the ABI's when set (a real program starts
	// slower than a small C one).
	startup, span time.Duration
	// gcore: stop with gdb's gcore (ptrace stops every thread where it
	// is) instead of SIGABRT, for the Go program, whose runtime handles
	// SIGABRT itself (it prints the goroutines and exits).
	gcore bool
}

// The real programs of the proof (x86-64, natively): Debian's python3
// running a script through its C extension modules, Debian's sqlite3
// shell running a query, and a Go program. Every module they load is a
// copy with SFrame written by sframe-gen: the program's PT_INTERP is made
// to name the patched dynamic linker, its libraries are found through
// LD_LIBRARY_PATH, python's extension modules through PYTHONPATH.
var realStackPrograms = []stackProgram{
	{name: "python3", real: preparePython},
	{name: "sqlite3", real: prepareSQLite},
	{name: "go", real: prepareGo},
}

// pythonScript calls from Python into C (_json, _decimal, _bz2, sorted
// with a Python key) and back, in a recursion, without end.
const pythonScript = `
import bz2, decimal, json, sys
sys.setrecursionlimit(10000)

def leaf():
    d = decimal.Decimal(1) / decimal.Decimal(7)
    s = json.dumps({"k": [str(d)] * 20, "n": list(range(50))})
    return len(bz2.compress(s.encode())) + len(json.loads(s)["n"])

def rec(n):
    if n == 0:
        return leaf()
    return rec(n - 1) + 1

data = list(range(300))
while True:
    rec(40)
    sorted(data, key=lambda x: -x)
`

// pythonExtensions are the extension modules the script imports.
var pythonExtensions = []string{"_json", "_decimal", "_bz2"}

func preparePython(t testing.TB, abi stackABI, dir, libdir string) stackRun {
	py := realProgram(t, "/usr/bin/python3", "python3")
	bin := patchRealProgram(t, abi, py, filepath.Join(dir, "python3"), libdir)
	ext := filepath.Join(dir, "pyext")
	if err := os.MkdirAll(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))").Output()
	if err != nil {
		t.Fatalf("%s: %v", py, err)
	}
	suffix := strings.TrimSpace(string(out))
	for _, m := range pythonExtensions {
		out, err := exec.Command(py, "-c", "import "+m+"; print("+m+".__file__)").Output()
		if err != nil {
			t.Fatalf("%s: import %s: %v", py, m, err)
		}
		src := strings.TrimSpace(string(out))
		dst := filepath.Join(ext, m+suffix)
		if _, err := sframegen.WriteFile(src, dst, sframegen.Options{}); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		patchNeeded(t, abi, dst, libdir)
	}
	script := filepath.Join(dir, "work.py")
	if err := os.WriteFile(script, []byte(pythonScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return stackRun{bin: bin, args: []string{script}, env: []string{"LD_LIBRARY_PATH=" + libdir, "PYTHONPATH=" + ext},
		startup: 150 * time.Millisecond, span: 400 * time.Millisecond}
}

// sqliteQuery counts without end through a recursive CTE, calling SQL
// functions (printf, hex, randomblob, length) for every row.
const sqliteQuery = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
SELECT max(length(printf('%d-%s', x, hex(randomblob(8))))) FROM c;`

func prepareSQLite(t testing.TB, abi stackABI, dir, libdir string) stackRun {
	bin := patchRealProgram(t, abi, realProgram(t, "/usr/bin/sqlite3", "sqlite3"), filepath.Join(dir, "sqlite3"), libdir)
	return stackRun{bin: bin, args: []string{":memory:", sqliteQuery}, env: []string{"LD_LIBRARY_PATH=" + libdir},
		startup: 50 * time.Millisecond, span: 300 * time.Millisecond}
}

// goProgram keeps three goroutines busy with recursion, strconv and sort.
const goProgram = `package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
)

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	for g := 0; g < 3; g++ {
		go func(g int) {
			for {
				s := make([]string, 200)
				for i := range s {
					s[i] = strconv.Itoa(fib(12+g) * i)
				}
				sort.Strings(s)
			}
		}(g)
	}
	fmt.Fprintln(os.Stderr, "running")
	select {}
}
`

// prepareGo builds the Go program with cgo off (a static program, linked
// by Go's own linker: its CFI is .debug_frame, which sframe-gen reads when
// there is no .eh_frame) and writes SFrame into it. Inlining is off
// (-gcflags=all=-l): the program carries its DWARF, from which gdb would
// print inlined calls as frames of their own, which no unwinder walks.
func prepareGo(t testing.TB, abi stackABI, dir, libdir string) stackRun {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = sysfiles.NeedProgram(t, "go")
	}
	src := filepath.Join(dir, "goprog")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"main.go": goProgram, "go.mod": "module goprog\n\ngo 1.21\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "goprog.bin")
	cmd := exec.Command(goTool, "build", "-gcflags=all=-l", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if _, err := sframegen.WriteFile(bin, bin, sframegen.Options{}); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return stackRun{bin: bin, startup: 50 * time.Millisecond, span: 300 * time.Millisecond, gcore: true}
}

// realProgram returns path (or the name's path) of an installed program,
// skipping the test when it is missing (failing in CI).
func realProgram(t testing.TB, path, name string) string {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return sysfiles.NeedProgram(t, name)
}

// patchRealProgram writes SFrame into a copy of the installed program
// src at dst, makes its PT_INTERP name the patched dynamic linker (through
// a link at a path short enough for the program's PT_INTERP), and patches
// the libraries it needs into libdir.
func patchRealProgram(t testing.TB, abi stackABI, src, dst, libdir string) string {
	t.Helper()
	if _, err := sframegen.WriteFile(src, dst, sframegen.Options{}); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	short, err := os.MkdirTemp("/tmp", "sfld")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	ldso := filepath.Join(short, "ld.so")
	if err := os.Symlink(filepath.Join(libdir, abi.ldso), ldso); err != nil {
		t.Fatal(err)
	}
	if err := setInterp(dst, ldso); err != nil {
		t.Fatalf("%s: %v", dst, err)
	}
	patchNeeded(t, abi, dst, libdir)
	return dst
}

// setInterp writes interp over the PT_INTERP string of the ELF file at
// path; it must fit in the segment.
func setInterp(path, interp string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	var off, size uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			off, size = p.Off, p.Filesz
		}
	}
	f.Close()
	if size == 0 {
		return errors.New("no PT_INTERP")
	}
	if uint64(len(interp)) >= size {
		return fmt.Errorf("interpreter %s does not fit in PT_INTERP (%d bytes)", interp, size)
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	buf := make([]byte, size)
	copy(buf, interp)
	if _, err := w.WriteAt(buf, int64(off)); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// patchNeeded writes SFrame into copies, in libdir, of the libraries the
// ELF file at path needs (DT_NEEDED, and theirs), found in the ABI's
// library directories; those already in libdir are kept.
func patchNeeded(t testing.TB, abi stackABI, path, libdir string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	needed, err := f.ImportedLibraries()
	f.Close()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, lib := range needed {
		dst := filepath.Join(libdir, lib)
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		src := ""
		for _, d := range []string{abi.libdir, "/usr" + abi.libdir} {
			if _, err := os.Stat(filepath.Join(d, lib)); err == nil {
				src = filepath.Join(d, lib)
				break
			}
		}
		if src == "" {
			t.Fatalf("%s needs %s, found in none of the library directories", path, lib)
		}
		if _, err := sframegen.WriteFile(src, dst, sframegen.Options{}); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		patchNeeded(t, abi, dst, libdir)
	}
}

// gcoreStop writes a core of the running process pid with gdb's gcore
// (every thread stopped by ptrace where it was), as dir/core.
func gcoreStop(pid int, dir string) (string, error) {
	prefix := filepath.Join(dir, "gcore")
	out, err := exec.Command("gcore", "-o", prefix, fmt.Sprint(pid)).CombinedOutput()
	core := fmt.Sprintf("%s.%d", prefix, pid)
	if _, serr := os.Stat(core); serr != nil {
		return "", fmt.Errorf("gcore %d: %v\n%s", pid, err, out)
	}
	return core, nil
}
