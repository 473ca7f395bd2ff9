//go:build linux && amd64

package target

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/sframe-gen/sframe-gen/emit"
)

// Attach stops every thread of the running process pid (Linux, x86-64
// hosts: ptrace) and reads their registers; its memory is read through
// /proc/PID/mem, its modules are those of /proc/PID/maps. Close detaches
// every thread again (a signal that arrived while it was stopped is
// passed on), so the process runs on. The calling goroutine is locked to
// its OS thread until Close (ptrace requests must come from the tracing
// thread): call Close from the same goroutine.
func Attach(pid int, opts Options) (p *Process, err error) {
	runtime.LockOSThread()
	attached := map[int]syscall.Signal{}
	detach := func() error {
		for tid, sig := range attached {
			syscall.RawSyscall6(syscall.SYS_PTRACE, syscall.PTRACE_DETACH, uintptr(tid), 0, uintptr(sig), 0, 0)
		}
		runtime.UnlockOSThread()
		return nil
	}
	defer func() {
		if err != nil {
			detach()
		}
	}()
	// Attach until no new thread appears (a thread may start meanwhile).
	for changed := true; changed; {
		changed = false
		tids, err := taskIDs(pid)
		if err != nil {
			return nil, err
		}
		for _, tid := range tids {
			if _, ok := attached[tid]; ok {
				continue
			}
			sig, err := attach(tid)
			if err != nil {
				if tid == pid {
					return nil, err
				}
				continue // the thread ended
			}
			attached[tid], changed = sig, true
		}
	}
	p = &Process{ABI: emit.ABIAMD64LittleEndian}
	tids, err := taskIDs(pid)
	if err != nil {
		return nil, err
	}
	for _, tid := range tids {
		if _, ok := attached[tid]; !ok {
			continue
		}
		var regs syscall.PtraceRegs
		if err := syscall.PtraceGetRegs(tid, &regs); err != nil {
			return nil, fmt.Errorf("thread %d: PTRACE_GETREGS: %w", tid, err)
		}
		words := (*[unsafe.Sizeof(regs) / 8]uint64)(unsafe.Pointer(&regs))
		t := Thread{TID: tid}
		setRegs(p.ABI, &t.Regs, func(i int) uint64 { return words[i] })
		p.Threads = append(p.Threads, t)
	}
	maps, err := procMaps(pid)
	if err != nil {
		return nil, err
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return nil, err
	}
	p.Mem = mem
	p.setModules(modulesFromMappings(maps, opts.Sysroot, opts.meter()))
	p.close = func() error {
		err := mem.Close()
		detach()
		return err
	}
	return p, nil
}

// taskIDs lists the threads of pid, the main thread first.
func taskIDs(pid int) ([]int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	tids := []int{pid}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil && tid != pid {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// attach stops thread tid with PTRACE_ATTACH and waits for the stop; it
// returns a signal other than the SIGSTOP of the attach that stopped the
// thread first, for the detach to deliver.
func attach(tid int) (syscall.Signal, error) {
	if err := syscall.PtraceAttach(tid); err != nil {
		if errors.Is(err, syscall.EPERM) {
			return 0, fmt.Errorf("thread %d: PTRACE_ATTACH: %w: %s", tid, err, whyNoTrace(tid))
		}
		return 0, fmt.Errorf("thread %d: PTRACE_ATTACH: %w", tid, err)
	}
	var pending syscall.Signal
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(tid, &ws, 0x40000000 /* __WALL */, nil); err != nil {
			return 0, fmt.Errorf("thread %d: wait: %w", tid, err)
		}
		if ws.Exited() || ws.Signaled() {
			return 0, fmt.Errorf("thread %d ended", tid)
		}
		if !ws.Stopped() {
			continue
		}
		if ws.StopSignal() == syscall.SIGSTOP {
			return pending, nil
		}
		// Another signal came first: keep it for the detach, and let
		// the thread go on to the SIGSTOP.
		pending = ws.StopSignal()
		if err := syscall.PtraceCont(tid, 0); err != nil {
			return 0, fmt.Errorf("thread %d: PTRACE_CONT: %w", tid, err)
		}
	}
}

// whyNoTrace says why thread tid cannot be traced: another tracer (a
// debugger attached), Yama's ptrace_scope, or no permission.
func whyNoTrace(tid int) string {
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			if v = strings.TrimSpace(v); v != "0" {
				return fmt.Sprintf("process %s traces it already (a debugger?); detach it first", v)
			}
		}
	}
	if scope, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil && strings.TrimSpace(string(scope)) != "0" {
		return fmt.Sprintf("kernel.yama.ptrace_scope is %s: run as root (or with CAP_SYS_PTRACE)", strings.TrimSpace(string(scope)))
	}
	return "no permission to trace it (another user's process?)"
}

// procMaps reads the file mappings of /proc/PID/maps.
func procMaps(pid int) ([]mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !filepath.IsAbs(fields[5]) {
			continue
		}
		se := strings.SplitN(fields[0], "-", 2)
		start, err1 := strconv.ParseUint(se[0], 16, 64)
		end, err2 := strconv.ParseUint(se[len(se)-1], 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("/proc/%d/maps: bad line %q", pid, sc.Text())
		}
		ms = append(ms, mapping{Start: start, End: end, Offset: off, Path: strings.Join(fields[5:], " "),
			File: fmt.Sprintf("/proc/%d/map_files/%s", pid, fields[0])})
	}
	return ms, sc.Err()
}
