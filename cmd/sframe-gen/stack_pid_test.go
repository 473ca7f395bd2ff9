package main

import (
	"bufio"
	"fmt"
	"io"
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

var (
	euThread = regexp.MustCompile(`^TID (\d+):`)
	euFrame  = regexp.MustCompile(`^#(\d+)\s+0x([0-9a-f]+)`)
)

// TestStackPIDAgainstEuStack walks the threads of a running program (its
// modules patched with sframe-gen) with stack --pid, then with eu-stack -p,
// and checks that every thread's frames have the same PCs; then that the
// program runs on: it answers a line on stdin and exits 0.
func TestStackPIDAgainstEuStack(t *testing.T) {
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("stack --pid is implemented for x86-64 Linux")
	}
	sysfiles.NeedProgram(t, "gcc")
	euStack := sysfiles.NeedProgram(t, "eu-stack")
	abi := stackABIs()[0]
	dir := t.TempDir()
	libdir := patchedLibs(t, abi, dir)
	bin := buildStackProgram(t, abi, stackProgram{name: "blocked", sources: []string{"blocked.c"}, flags: []string{"-O2", "-pthread"}}, dir, libdir)
	cmd := exec.Command(bin)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("program said %q, %v", line, err)
	}
	pid := cmd.Process.Pid
	waitInRead(t, pid, 4) // main and the three workers: stacks that hold still

	res, err := stackOfPID(pid, "", nil)
	if err != nil {
		t.Fatalf("stack --pid: %v", err)
	}
	eu, err := exec.Command(euStack, "-p", strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		t.Fatalf("eu-stack: %v\n%s", err, eu)
	}
	theirs := parseEuStack(string(eu))
	if len(res.Threads) != 4 || len(theirs) != 4 {
		t.Fatalf("%d threads walked, eu-stack %d, want 4\n%s", len(res.Threads), len(theirs), eu)
	}
	frames := 0
	for _, th := range res.Threads {
		var ours []uint64
		for _, f := range th.Frames {
			ours = append(ours, f.PC)
		}
		if !th.End.Complete || !slices.Equal(ours, theirs[th.TID]) {
			t.Errorf("thread %d: SFrame %#x (%s)\neu-stack %#x", th.TID, ours, th.End.Detail, theirs[th.TID])
		}
		frames += len(ours)
	}
	t.Logf("%d threads, %d frames, equal to eu-stack's", len(res.Threads), frames)

	// The program and libc replaced on disk by copies without SFrame
	// (renamed over them, as a package upgrade does): the walk reads the
	// files the process maps, through /proc/PID/map_files, and gives the
	// same frames.
	for _, path := range []string{bin, filepath.Join(libdir, "libc.so.6")} {
		orig := filepath.Join(abi.libdir, filepath.Base(path))
		if path == bin {
			orig = "/bin/true"
		}
		data, err := os.ReadFile(orig)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".new", data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	again, err := stackOfPID(pid, "", nil)
	if err != nil {
		t.Fatalf("stack --pid after the files were replaced: %v", err)
	}
	deleted := 0
	for _, m := range again.Modules {
		if strings.HasSuffix(m.Name, " (deleted)") {
			deleted++
			if !m.SFrame {
				t.Errorf("module %s (%s): no SFrame read: %s", m.Name, m.Path, m.NoSFrame)
			}
		}
	}
	if deleted != 2 {
		t.Errorf("%d modules shown deleted, want 2 (the program and libc)", deleted)
	}
	for i, th := range again.Threads {
		if !slices.Equal(framePCs(th), framePCs(res.Threads[i])) || !th.End.Complete {
			t.Errorf("thread %d after the files were replaced: %#x (%s), before %#x", th.TID, framePCs(th), th.End.Detail, framePCs(res.Threads[i]))
		}
	}

	// The program runs on.
	io.WriteString(stdin, "go\n")
	if line, err := out.ReadString('\n'); err != nil || line != "done\n" {
		t.Fatalf("after the walk the program said %q, %v", line, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after the walk: %v", err)
	}
}

// framePCs returns the PCs of th's frames.
func framePCs(th threadStack) []uint64 {
	var pcs []uint64
	for _, f := range th.Frames {
		pcs = append(pcs, f.PC)
	}
	return pcs
}

// waitInRead waits until the n threads of process pid are all in read(2)
// (their /proc/PID/task/TID/syscall starts with its number, 0 on x86-64):
// a fixed wait was too short on a loaded machine, where a worker still
// descending made the two walks differ.
func waitInRead(t *testing.T, pid, n int) {
	t.Helper()
	var states []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		states = states[:0]
		for _, task := range tasks {
			b, _ := os.ReadFile(task)
			states = append(states, strings.Fields(string(b) + " ?")[0])
		}
		if len(states) == n && !slices.ContainsFunc(states, func(s string) bool { return s != "0" }) {
			return
		}
	}
	t.Fatalf("after 20 s the program's threads are in system calls %q, want %d in read (0)", states, n)
}

// parseEuStack returns eu-stack's frame PCs by thread.
func parseEuStack(out string) map[int][]uint64 {
	stacks := map[int][]uint64{}
	tid := 0
	for _, line := range strings.Split(out, "\n") {
		if m := euThread.FindStringSubmatch(line); m != nil {
			tid, _ = strconv.Atoi(m[1])
			stacks[tid] = nil
		} else if m := euFrame.FindStringSubmatch(line); m != nil && tid != 0 {
			pc, _ := strconv.ParseUint(m[2], 16, 64)
			stacks[tid] = append(stacks[tid], pc)
		}
	}
	return stacks
}

// TestStackPIDTraced walks a process a debugger is attached to: the error
// says that another process traces it.
func TestStackPIDTraced(t *testing.T) {
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("stack --pid is implemented for x86-64 Linux")
	}
	gdb := sysfiles.NeedProgram(t, "gdb")
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Wait()
	defer sleep.Process.Kill()
	pid := sleep.Process.Pid
	tracer := exec.Command(gdb, "-nx", "-batch", "-p", strconv.Itoa(pid), "-ex", "shell sleep 60")
	if err := tracer.Start(); err != nil {
		t.Fatal(err)
	}
	defer tracer.Wait()
	defer tracer.Process.Kill()
	status := fmt.Sprintf("/proc/%d/status", pid)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(status)
		if regexp.MustCompile(`(?m)^TracerPid:\s*[1-9]`).Match(b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gdb did not attach to %d in 20 s", pid)
		}
	}
	_, err := stackOfPID(pid, "", nil)
	if err == nil || !strings.Contains(err.Error(), "PTRACE_ATTACH: operation not permitted: process ") || !strings.Contains(err.Error(), "traces it already") {
		t.Fatalf("stack --pid of a traced process: %v, want the tracer named", err)
	}
}
