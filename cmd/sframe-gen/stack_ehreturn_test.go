package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestStackS390XEHReturn stops the s390x exceptions program where the
// SFrame walk cannot follow the CFI, every time: in libgcc's
// _Unwind_RaiseException at its epilogue's lmg, reached through
// __builtin_eh_return, when the function's %r15 save slot already holds
// the exception handler's stack pointer (CFI: r15 at CFA-40) and SFrame,
// which has no %r15 rule, takes CFA-160. The proof must list that stop as
// one SFrame cannot describe (pastGDB.callerSPFromSlot), and nothing
// else in it: the frames up to the handler's agree with gdb's, and the
// next one does not.
func TestStackS390XEHReturn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: single-steps a C++ program under qemu-s390x and gdb (runs in make test-long)")
	}
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("the proof runs on x86-64 Linux (qemu-user for s390x)")
	}
	i := slices.IndexFunc(stackABIs(), func(a stackABI) bool { return a.name == "s390x" })
	j := slices.IndexFunc(stackPrograms, func(p stackProgram) bool { return p.name == "exceptions" })
	abi, prog := stackABIs()[i], stackPrograms[j]
	for _, tool := range []string{abi.cxx, abi.gdb, abi.qemu, "s390x-linux-gnu-objdump"} {
		sysfiles.NeedProgram(t, tool)
	}
	raiseCoreLimit(t)
	dir := t.TempDir()
	libdir := patchedLibs(t, abi, dir)
	bin := buildStackProgram(t, abi, prog, dir, libdir)
	lmg := epilogueOffset(t, filepath.Join(libdir, "libgcc_s.so.1"), "_Unwind_RaiseException")

	// At the lmg, reached through __builtin_eh_return: listed.
	core := stopUnderGDB(t, abi, bin, filepath.Join(dir, "eh"), fmt.Sprintf("*_Unwind_RaiseException+%d", lmg), "lmg\t%r6,%r15,")
	tally := compareWithGDB(t, abi, bin, []string{core})
	for _, d := range tally.disagree {
		t.Errorf("disagreement: %s", d)
	}
	if len(tally.spSlot) != 1 || !strings.Contains(tally.spSlot[0], "frame #2:") {
		t.Fatalf("want one stop listed as a caller's %%r15 SFrame cannot say, at frame #2 (after _Unwind_RaiseException and the handler in main); got %d: %q", len(tally.spSlot), tally.spSlot)
	}
	t.Logf("listed, not failed: %s", tally.spSlot[0])
	// Walked from another directory, the program's relative path is
	// found through the core's; a core moved away from it says why the
	// program is not found.
	moved := filepath.Join(t.TempDir(), "moved.core")
	if err := os.Link(core, moved); err != nil {
		t.Fatal(err)
	}
	if _, err := stackOfCore(moved, "", nil); err == nil || !strings.Contains(err.Error(), "program ../s390x-exceptions: a path relative to the process's working directory") {
		t.Errorf("%s: want an error naming the relative path, got %v", moved, err)
	}
	// Not listed where gdb's frames are not the DWARF walk's.
	th, g, past := threadOfCore(t, abi, bin, core)
	g[3].pc += 2
	if past.callerSPFromSlot(th, 2, g) {
		t.Errorf("%s: listed with gdb's frame #3 changed", core)
	}

	// In the same function before the handler is known, where the slot
	// holds CFA-160: no %r15 from the slot, nothing listed, even for a
	// frame said to disagree.
	core = stopUnderGDB(t, abi, bin, filepath.Join(dir, "entry"), "_Unwind_RaiseException", "")
	tally = compareWithGDB(t, abi, bin, []string{core})
	if len(tally.disagree) != 0 || len(tally.spSlot) != 0 || tally.stops != 1 || tally.frames < 5 {
		t.Errorf("%s: want a walk equal to gdb's; %d stops, %d frames, disagreements %q, listed %q", core, tally.stops, tally.frames, tally.disagree, tally.spSlot)
	}
	th, g, past = threadOfCore(t, abi, bin, core)
	if past.callerSPFromSlot(th, 2, g) {
		t.Errorf("%s: listed with no %%r15 from the slot", core)
	}
}

// stopUnderGDB runs bin under qemu and gdb, stops it at the second hit
// of gdb location where (after a first at _Unwind_RaiseException, when
// the libraries are loaded; the program started by a path relative to
// dir), checks that gdb's "x/i $pc" there says want,
// and has qemu write the guest's core in dir with SIGABRT.
func stopUnderGDB(t *testing.T, abi stackABI, bin, dir, where, want string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// A directory named core: the host's core of qemu cannot be written.
	if err := os.MkdirAll(filepath.Join(dir, "core"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The program by a relative path, as the core records it: the walk
	// finds it from the core's directory (modulesFromLinkMap).
	rel, err := filepath.Rel(dir, bin)
	if err != nil {
		t.Fatal(err)
	}
	qemu := exec.CommandContext(ctx, abi.qemu, "-singlestep", "-g", strconv.Itoa(port), rel)
	qemu.Dir = dir
	if err := qemu.Start(); err != nil {
		t.Fatal(err)
	}
	defer qemu.Wait()
	defer qemu.Process.Kill()
	out, _ := exec.CommandContext(ctx, abi.gdb, "-nx", "-batch", "-ex", "set pagination off", "-ex", "set tcp connect-timeout 30",
		"-ex", "file "+bin, "-ex", fmt.Sprintf("target remote 127.0.0.1:%d", port),
		"-ex", "set breakpoint pending on", "-ex", "break _Unwind_RaiseException", "-ex", "continue", "-ex", "delete",
		"-ex", "break "+where, "-ex", "continue", "-ex", "x/i $pc", "-ex", "signal SIGABRT").CombinedOutput()
	qemu.Wait()
	if !strings.Contains(string(out), "Breakpoint 2,") || !strings.Contains(string(out), want) {
		t.Fatalf("gdb did not stop the program at %s (%q):\n%s", where, want, out)
	}
	cores, _ := filepath.Glob(filepath.Join(dir, "qemu_*.core"))
	if len(cores) != 1 {
		t.Fatalf("%d cores of the stop at %s; gdb:\n%s", len(cores), where, out)
	}
	return cores[0]
}

// threadOfCore returns the SFrame walk of a one-thread core, gdb's
// frames of it and the DWARF walker on it.
func threadOfCore(t *testing.T, abi stackABI, bin, core string) (threadStack, []gdbFrame, *pastGDB) {
	t.Helper()
	res, err := stackOfCore(core, "", nil)
	if err != nil || len(res.Threads) != 1 {
		t.Fatalf("%s: %v (%d threads)", core, err, len(res.Threads))
	}
	th := res.Threads[0]
	g := gdbStacks(t, abi, bin, []string{core})[0][th.TID]
	if len(g) < 4 {
		t.Fatalf("%s: gdb walked %d frames", core, len(g))
	}
	past := openPastGDB(t, core)
	t.Cleanup(past.close)
	return th, g, past
}

// epilogueOffset returns the offset in function fn of lib of its only
// "lmg %r6,%r15,...": the s390x epilogue that loads %r15 from its slot.
func epilogueOffset(t *testing.T, lib, fn string) uint64 {
	t.Helper()
	out, err := exec.Command("s390x-linux-gnu-objdump", "-d", "--no-show-raw-insn", lib).Output()
	if err != nil {
		t.Fatalf("objdump -d %s: %v", lib, err)
	}
	head := regexp.MustCompile(`^([0-9a-f]+) <` + regexp.QuoteMeta(fn) + `(@@[^>]*)?>:$`)
	insn := regexp.MustCompile(`^\s*([0-9a-f]+):\s+lmg\s+%r6,%r15,`)
	var start uint64
	var found []uint64
	in := false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if m := head.FindStringSubmatch(line); m != nil {
			start, _ = strconv.ParseUint(m[1], 16, 64)
			in = true
			continue
		}
		if in && line == "" {
			in = false
		}
		if m := insn.FindStringSubmatch(line); in && m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			found = append(found, a-start)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %s: want one lmg %%r6,%%r15 (its epilogue), found %d", lib, fn, len(found))
	}
	return found[0]
}
