package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit/unwind"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// stackABI is a target the proof runs programs of: natively or under
// qemu-user, checked with gdb or gdb-multiarch.
type stackABI struct {
	name     string
	cc, cxx  string
	cflags   []string // -no-pie under qemu: gdb 13 does not relocate a PIE in qemu's cores
	libdir   string   // the target's libc, libstdc++, libgcc_s, the dynamic linker
	ldso     string
	asm      string // testdata/stack/asm_*.S
	sigtramp string // testdata/stack/sigtramp_*.S, the signal handler's restorer ("": glibc's)
	qemu     string // "": native
	gdb      string
	startup  time.Duration // before the program reaches its loop
	stopSpan time.Duration // the stops are spread over this much after startup
}

func stackABIs() []stackABI {
	return []stackABI{
		{name: "x86-64", cc: "gcc", cxx: "g++", libdir: "/lib/x86_64-linux-gnu", ldso: "ld-linux-x86-64.so.2",
			asm: "asm_x86_64.S", gdb: "gdb", startup: 10 * time.Millisecond, stopSpan: 60 * time.Millisecond},
		{name: "aarch64", cc: "aarch64-linux-gnu-gcc", cxx: "aarch64-linux-gnu-g++", cflags: []string{"-no-pie"},
			libdir: "/usr/aarch64-linux-gnu/lib", ldso: "ld-linux-aarch64.so.1", asm: "asm_aarch64.S", sigtramp: "sigtramp_aarch64.S",
			qemu: "qemu-aarch64", gdb: "gdb-multiarch", startup: 400 * time.Millisecond, stopSpan: 300 * time.Millisecond},
		{name: "s390x", cc: "s390x-linux-gnu-gcc", cxx: "s390x-linux-gnu-g++", cflags: []string{"-no-pie"},
			libdir: "/usr/s390x-linux-gnu/lib", ldso: "ld64.so.1", asm: "asm_s390x.S", sigtramp: "sigtramp_s390x.S",
			qemu: "qemu-s390x", gdb: "gdb-multiarch", startup: 400 * time.Millisecond, stopSpan: 300 * time.Millisecond},
	}
}

// stackProgram is one workload of testdata/stack.
type stackProgram struct {
	name    string
	cxx     bool
	sources []string // under testdata/stack; "ASM" and "SIGTRAMP" are the ABI's assembly files
	flags   []string
	libs    bool // links the libchain libraries
	// real prepares an installed (or Go-built) program instead of
	// building sources: x86-64 only (stack_real_test.go).
	real func(t testing.TB, abi stackABI, dir, libdir string) stackRun
}

var stackPrograms = []stackProgram{
	{name: "recurse-O2", sources: []string{"recurse.c"}, flags: []string{"-O2", "-fomit-frame-pointer"}},
	{name: "recurse-O0", sources: []string{"recurse.c"}, flags: []string{"-O0"}},
	{name: "qsortcb", sources: []string{"qsortcb.c"}, flags: []string{"-O2", "-fomit-frame-pointer"}},
	{name: "exceptions", cxx: true, sources: []string{"exceptions.cc"}, flags: []string{"-O2"}},
	{name: "sighandler", sources: []string{"sighandler.c", "SIGTRAMP"}, flags: []string{"-O2", "-fomit-frame-pointer"}},
	{name: "asmframe", sources: []string{"asmframe.c", "ASM"}, flags: []string{"-O2"}},
	{name: "libs", sources: []string{"libs.c"}, flags: []string{"-O1"}, libs: true},
	{name: "threads", sources: []string{"threads.c"}, flags: []string{"-O2", "-pthread"}},
}

// stopsPerProgram is how many stops each program gets per ABI:
// SFRAME_STACK_STOPS, or 2 (make test-long). SFRAME_STACK_ONLY=NAME[,NAME...]
// runs only the programs named.
func stopsPerProgram(t *testing.T) int {
	if s := os.Getenv("SFRAME_STACK_STOPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SFRAME_STACK_STOPS=%q: want a positive count", s)
		}
		return n
	}
	return 2
}

// TestStackAgainstGDB is the proof: programs of every ABI, each module
// carrying SFrame written by sframe-gen, are stopped by SIGABRT at random
// moments (natively, or under qemu-user in single-step mode so that a
// signal lands at any instruction); the core's stacks are walked with
// SFrame alone (stackOfCore) and by gdb with DWARF CFI, and every frame's
// PC must agree from the innermost frame on. A walk that ends before
// gdb's is listed with its reason; it fails the test unless the reason is
// one SFrame cannot avoid.
func TestStackAgainstGDB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stops 8 programs on three ABIs, two under qemu-user (runs in make test-long; TestStackReadmeRecipe compares a walk with gdb in make test)")
	}
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("the proof runs on x86-64 Linux (native x86-64, qemu-user for the others)")
	}
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if p := strings.TrimSpace(string(pattern)); strings.ContainsAny(p, "|/%") {
		sysfiles.NeedInput(t, "core_pattern %q is not a plain file name (the native stops need cores written in the working directory): as root, echo core > /proc/sys/kernel/core_pattern", p)
	}
	raiseCoreLimit(t)
	stops := stopsPerProgram(t)
	for _, abi := range stackABIs() {
		t.Run(abi.name, func(t *testing.T) {
			sysfiles.NeedProgram(t, abi.cc)
			sysfiles.NeedProgram(t, abi.cxx)
			sysfiles.NeedProgram(t, abi.gdb)
			if abi.qemu != "" {
				sysfiles.NeedProgram(t, abi.qemu)
			}
			// SFRAME_STACK_KEEP: a directory where the programs, the
			// patched libraries and the cores are made and kept, to look
			// into a failure with gdb.
			dir, keep := t.TempDir(), os.Getenv("SFRAME_STACK_KEEP")
			if keep != "" {
				dir = filepath.Join(keep, abi.name)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			libdir := patchedLibs(t, abi, dir)
			var total stackTally
			// SFRAME_STACK_ONLY: programs' names, comma-separated: only those.
			only := strings.Split(os.Getenv("SFRAME_STACK_ONLY"), ",")
			programs := 0
			for _, prog := range append(stackPrograms, realStackPrograms...) {
				if only[0] != "" && !slices.Contains(only, prog.name) || prog.real != nil && abi.qemu != "" {
					continue
				}
				programs++
				run := stackRun{bin: ""}
				if prog.real != nil {
					run = prog.real(t, abi, dir, libdir)
				} else {
					run.bin = buildStackProgram(t, abi, prog, dir, libdir)
				}
				// The cores of a batch are removed once compared: gcore's of
				// the Go program take a gigabyte each (its reserved heap).
				batch := stops
				if run.gcore {
					batch = 5
				}
				var tally stackTally
				for done := 0; done < stops; done += batch {
					cores := stopProgram(t, abi, run, filepath.Join(dir, fmt.Sprintf("stops-%s-%d", prog.name, done)), min(batch, stops-done))
					tally.add(compareWithGDB(t, abi, run.bin, cores))
					for _, c := range cores {
						if keep == "" {
							os.Remove(c)
						}
					}
				}
				t.Logf("%s %s: %d stops, %d threads, %d frames (%d signal), %d disagreements, %d ended earlier, %d gdb ended earlier",
					abi.name, prog.name, tally.stops, tally.threads, tally.frames, tally.signals, len(tally.disagree), len(tally.earlier), len(tally.gdbEarlier))
				total.add(tally)
			}
			t.Logf("%s: %d stops across %d programs, %d threads, %d frames (%d signal): %d disagreements, %d walks ended before gdb's, %d where gdb ended first",
				abi.name, total.stops, programs, total.threads, total.frames, total.signals, len(total.disagree), len(total.earlier), len(total.gdbEarlier))
			for _, e := range total.earlier {
				t.Logf("ended earlier: %s", e)
			}
			t.Logf("%s: %d stacks compared up to a frame in a module gdb did not know", abi.name, len(total.gdbUnknown))
			for _, e := range total.gdbUnknown {
				t.Logf("gdb without the module: %s", e)
			}
			for _, e := range total.gdbEarlier {
				t.Logf("gdb ended first: %s", e)
			}
			t.Logf("%s: past gdb's last frame, %d frames equal to a DWARF CFI walk's, %d walks DWARF ended first; s390x caller's %%r15: %d by the CFI equal to CFA-160 (%d not), %d taken as CFA-160 (the CFI puts it in a register the core lacks), %d (no rule)",
				abi.name, total.pastChecked, len(total.pastDwarfEarlier), total.spChecked-total.spDiffer, total.spDiffer, total.spFromCFA, total.spNoRule)
			for _, e := range total.pastDwarfEarlier {
				t.Logf("DWARF ended first: %s", e)
			}
			for _, e := range total.spSlot {
				t.Logf("caller's %%r15 from its save slot, not CFA-160 (SFrame cannot say it): %s", e)
			}
			for _, d := range total.disagree {
				t.Errorf("disagreement: %s", d)
			}
		})
	}
}

// raiseCoreLimit lets the test's processes (and qemu's guests) write
// cores, until the test ends.
func raiseCoreLimit(t testing.TB) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_CORE, &lim) })
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{Cur: lim.Max, Max: lim.Max}); err != nil || lim.Max < 64<<20 {
		t.Fatalf("RLIMIT_CORE: cannot raise to %d (%v)", lim.Max, err)
	}
}

// patchedLibs writes SFrame into copies of the ABI's dynamic linker and
// libraries, in dir/lib.
func patchedLibs(t testing.TB, abi stackABI, dir string) string {
	t.Helper()
	lib := filepath.Join(dir, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{abi.ldso, "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"} {
		if _, err := sframegen.WriteFile(filepath.Join(abi.libdir, name), filepath.Join(lib, name), sframegen.Options{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return lib
}

// buildStackProgram compiles prog for abi, its dynamic linker and run path
// the patched libraries, and writes SFrame into it (and its libraries).
func buildStackProgram(t testing.TB, abi stackABI, prog stackProgram, dir, libdir string) string {
	t.Helper()
	src, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "stack"))
	cc := abi.cc
	if prog.cxx {
		cc = abi.cxx
	}
	// DT_RPATH, not DT_RUNPATH: it also applies to the libraries' own
	// dependencies (libstdc++ needs libm), so every module is a patched one.
	link := []string{"-Wl,--dynamic-linker=" + filepath.Join(libdir, abi.ldso), "-Wl,-rpath," + libdir, "-Wl,--disable-new-dtags", "-L" + libdir}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	patch := func(path string) {
		t.Helper()
		if _, err := sframegen.WriteFile(path, path, sframegen.Options{}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if prog.libs {
		for level := 3; level >= 1; level-- {
			so := filepath.Join(libdir, fmt.Sprintf("libchain%d.so", level))
			args := []string{abi.cc, "-O2", "-fPIC", "-shared", fmt.Sprintf("-DLEVEL=%d", level), "-o", so, filepath.Join(src, "libchain.c")}
			if level < 3 {
				args = append(args, fmt.Sprintf("-lchain%d", level+1))
			}
			run(append(args, link...)...)
			patch(so)
		}
	}
	bin := filepath.Join(dir, abi.name+"-"+prog.name)
	args := []string{cc, "-o", bin}
	args = append(args, prog.flags...)
	args = append(args, abi.cflags...)
	for _, s := range prog.sources {
		switch s {
		case "ASM":
			s = abi.asm
		case "SIGTRAMP":
			if s = abi.sigtramp; s == "" {
				continue
			}
		}
		args = append(args, filepath.Join(src, s))
	}
	args = append(args, link...)
	if prog.libs {
		args = append(args, "-lchain1")
	}
	run(args...)
	patch(bin)
	return bin
}

// stopProgram runs the program n times, each time sending SIGABRT (or
// taking a gcore) at a random moment, and returns the cores written.
func stopProgram(t testing.TB, abi stackABI, run stackRun, dir string, n int) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if abi.qemu != "" {
		// A directory named core: qemu dumps the guest's core
		// (qemu_*.core) and then aborts itself; the host's core of
		// qemu cannot be written.
		if err := os.Mkdir(filepath.Join(dir, "core"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	startup, span := abi.startup, abi.stopSpan
	if run.startup != 0 {
		startup, span = run.startup, run.span
	}
	var cores []string
	for i := 0; len(cores) < n && i < 3*n; i++ {
		cmd := exec.Command(run.bin, run.args...)
		if abi.qemu != "" {
			cmd = exec.Command(abi.qemu, append([]string{"-singlestep", run.bin}, run.args...)...)
		}
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), run.env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(startup + time.Duration(rand.Int64N(int64(span))))
		core := ""
		if run.gcore {
			c, err := gcoreStop(cmd.Process.Pid, dir)
			if err != nil {
				t.Log(err)
			}
			cmd.Process.Kill()
			cmd.Wait()
			core = c
		} else {
			cmd.Process.Signal(syscall.SIGABRT)
			cmd.Wait()
		}
		switch {
		case run.gcore:
		case abi.qemu == "":
			core = filepath.Join(dir, "core")
		default:
			if m, _ := filepath.Glob(filepath.Join(dir, "qemu_*.core")); len(m) == 1 {
				core = m[0]
			}
		}
		if core == "" {
			continue
		}
		dst := filepath.Join(dir, fmt.Sprintf("stop%04d.core", i))
		if err := os.Rename(core, dst); err != nil {
			continue
		}
		if err := coreComplete(dst); err != nil {
			// qemu, on a loaded machine, sometimes leaves a core it has
			// not finished writing: not a stop, another run is made.
			t.Logf("%s: core discarded: %v", dst, err)
			continue
		}
		cores = append(cores, dst)
	}
	if len(cores) < n {
		t.Fatalf("%s: %d cores of %d stops", run.bin, len(cores), n)
	}
	return cores
}

// coreComplete reports why the core at path cannot be read, if it cannot.
func coreComplete(path string) error {
	p, err := target.OpenCore(path, target.Options{})
	if err != nil {
		return err
	}
	return p.Close()
}

// stackTally counts what a comparison found.
type stackTally struct {
	stops, threads, frames int
	signals                int // signal frames walked through
	disagree, earlier      []string
	gdbEarlier             []string
	gdbUnknown             []string // stacks compared up to a PC gdb knows no module of
	// Past gdb's last frame, the frames checked against a DWARF CFI walk
	// (checkPastGDB), the walks that DWARF ended first, and on s390x the
	// callers' %r15 (dwarfWalker.callerSP).
	pastChecked                    int
	pastDwarfEarlier               []string
	spChecked, spDiffer, spFromCFA int
	spNoRule                       int
	// s390x: disagreements with gdb where the caller's %r15 in its save
	// slot is not CFA-160, which SFrame has no rule for
	// (pastGDB.callerSPFromSlot): not failures, listed.
	spSlot []string
}

func (a *stackTally) add(b stackTally) {
	a.stops += b.stops
	a.threads += b.threads
	a.frames += b.frames
	a.signals += b.signals
	a.disagree = append(a.disagree, b.disagree...)
	a.earlier = append(a.earlier, b.earlier...)
	a.gdbEarlier = append(a.gdbEarlier, b.gdbEarlier...)
	a.gdbUnknown = append(a.gdbUnknown, b.gdbUnknown...)
	a.pastChecked += b.pastChecked
	a.pastDwarfEarlier = append(a.pastDwarfEarlier, b.pastDwarfEarlier...)
	a.spChecked += b.spChecked
	a.spDiffer += b.spDiffer
	a.spFromCFA += b.spFromCFA
	a.spNoRule += b.spNoRule
	a.spSlot = append(a.spSlot, b.spSlot...)
}

// gdbFrame is one frame of gdb's bt: its PC, or a signal frame.
type gdbFrame struct {
	pc     uint64
	signal bool
	text   string
	note   string // why gdb stopped after this frame
	// unknown: gdb knows no module at this PC ("?? ()" without "from
	// LIB": a stop in the dynamic linker before it has listed itself in
	// r_debug), so it has no CFI for it and guesses the next frame.
	unknown bool
}

var (
	gdbCoreMark = regexp.MustCompile(`^@@@ (\d+)$`)
	gdbThread   = regexp.MustCompile(`^Thread \d+ .*LWP (\d+)\)`)
	gdbPCFrame  = regexp.MustCompile(`^#(\d+)\s+0x([0-9a-f]+) in `)
	gdbSigFrame = regexp.MustCompile(`^#(\d+)\s+<signal handler called>`)
)

// gdbStacks runs gdb once on all cores of bin and returns, per core, the
// frames of each thread (by LWP).
func gdbStacks(t *testing.T, abi stackABI, bin string, cores []string) []map[int][]gdbFrame {
	t.Helper()
	// No separate debug information: gdb then walks with the modules'
	// .eh_frame as we do with their .sframe, and shows no inlined frames.
	args := []string{"-nx", "-batch", "-iex", "set debug-file-directory /nonexistent", "-iex", "set debuginfod enabled off",
		"-iex", "set auto-load off", "-iex", "set libthread-db-search-path /nonexistent", "-ex", "set backtrace limit 4096", "-ex", "set pagination off", "-ex", "set width 0", "-ex", "set confirm off",
		"-ex", "set print frame-info location-and-address", "-ex", "set backtrace past-main on",
		"-ex", "set backtrace past-entry on", "-ex", "file " + bin}
	for i, c := range cores {
		// The mark first: core-file prints the new core's frame #0.
		args = append(args, "-ex", fmt.Sprintf("echo @@@ %d\\n", i), "-ex", "core-file "+c, "-ex", "thread apply all bt")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(cores))*20*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, abi.gdb, args...).CombinedOutput()
	stacks := make([]map[int][]gdbFrame, len(cores))
	cur, tid := -1, 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if m := gdbCoreMark.FindStringSubmatch(line); m != nil {
			cur, _ = strconv.Atoi(m[1])
			stacks[cur], tid = map[int][]gdbFrame{}, 0
			continue
		}
		if m := gdbThread.FindStringSubmatch(line); m != nil {
			tid, _ = strconv.Atoi(m[1])
			continue
		}
		if cur < 0 || tid == 0 {
			continue // before the first thread of a core
		}
		if m := gdbPCFrame.FindStringSubmatch(line); m != nil {
			pc, _ := strconv.ParseUint(m[2], 16, 64)
			stacks[cur][tid] = append(stacks[cur][tid], gdbFrame{pc: pc, text: line, unknown: strings.HasSuffix(line, " in ?? ()")})
		} else if gdbSigFrame.MatchString(line) {
			stacks[cur][tid] = append(stacks[cur][tid], gdbFrame{signal: true, text: line})
		} else if fs := stacks[cur][tid]; len(fs) > 0 && (strings.HasPrefix(line, "Backtrace stopped") || strings.Contains(line, "Exception")) {
			fs[len(fs)-1].note = line
		}
	}
	return stacks
}

// compareWithGDB walks each core with SFrame and compares the frames with
// gdb's.
func compareWithGDB(t *testing.T, abi stackABI, bin string, cores []string) stackTally {
	t.Helper()
	gdb := gdbStacks(t, abi, bin, cores)
	var tally stackTally
	for i, core := range cores {
		tally.stops++
		res, err := stackOfCore(core, "", nil)
		if err != nil {
			tally.disagree = append(tally.disagree, fmt.Sprintf("%s: %v", core, err))
			continue
		}
		if gdb[i] == nil {
			tally.disagree = append(tally.disagree, fmt.Sprintf("%s: no output from gdb", core))
			continue
		}
		var past *pastGDB
		for _, th := range res.Threads {
			tally.threads++
			tally.frames += len(th.Frames)
			for _, f := range th.Frames {
				if f.Signal {
					tally.signals++
				}
			}
			where := fmt.Sprintf("%s %s thread %d", abi.name, filepath.Base(bin), th.TID)
			g := gdb[i][th.TID]
			checked, bad := compareThread(&tally, where, bin, core, th, g)
			if checked < len(th.Frames) || bad >= 0 && abi.name == "s390x" {
				if past == nil {
					past = openPastGDB(t, core)
					defer past.close()
				}
			}
			switch {
			case bad >= 0:
				msg := fmt.Sprintf("%s (%s): frame #%d: SFrame %#x %s (signal %v), gdb %q\n%s",
					where, core, bad, th.Frames[bad].PC, th.Frames[bad].Function, th.Frames[bad].Signal, g[bad].text, describeWalk(th, g))
				if abi.name == "s390x" && past.callerSPFromSlot(th, bad, g) {
					tally.spSlot = append(tally.spSlot, msg)
				} else {
					tally.disagree = append(tally.disagree, msg)
				}
			case checked < len(th.Frames):
				past.check(&tally, where, core, th, checked)
			}
		}
		if past != nil {
			tally.spChecked += past.dw.spChecked
			tally.spDiffer += past.dw.spDiffer
			tally.spFromCFA += past.dw.spFromCFA
			tally.spNoRule += past.dw.spNoRule
		}
	}
	return tally
}

// pastGDB checks the frames of a core past gdb's last one with the DWARF
// CFI walk of dwarfWalker (.eh_frame, not .sframe), from the same
// registers and memory.
type pastGDB struct {
	proc *target.Process
	dw   *dwarfWalker
}

func openPastGDB(t *testing.T, core string) *pastGDB {
	t.Helper()
	p, err := target.OpenCore(core, target.Options{})
	if err != nil {
		t.Fatalf("%s: %v", core, err)
	}
	return &pastGDB{proc: p, dw: newDwarfWalker(t, p.ABI, p.Mem, p.Modules)}
}

func (p *pastGDB) close() { p.proc.Close() }

// check compares thread th's SFrame frames from frame from on with the
// DWARF walk's: a different PC is a disagreement; a DWARF walk that ends
// first is listed.
func (p *pastGDB) check(tally *stackTally, where, core string, th threadStack, from int) {
	regs := p.regs(th.TID)
	if regs == nil {
		tally.disagree = append(tally.disagree, fmt.Sprintf("%s (%s): no registers for the DWARF walk", where, core))
		return
	}
	pcs := p.dw.walk(regs, nil)
	for k := from; k < len(th.Frames); k++ {
		if k >= len(pcs) {
			last := th.Frames[len(pcs)-1]
			tally.pastDwarfEarlier = append(tally.pastDwarfEarlier, fmt.Sprintf("%s (%s): %d frames, gdb %d, DWARF %d, at %#x %s+%#x (%s)",
				where, core, len(th.Frames), from, len(pcs), last.PC, last.Function, last.Offset, last.Module))
			return
		}
		if pcs[k] != th.Frames[k].PC {
			var b strings.Builder
			for j := range max(len(pcs), len(th.Frames)) {
				ours, theirs := "", ""
				if j < len(th.Frames) {
					f := th.Frames[j]
					ours = fmt.Sprintf("%#x sp %#x %s+%#x (%s)", f.PC, f.SP, f.Function, f.Offset, f.Module)
				}
				if j < len(pcs) {
					theirs = fmt.Sprintf("%#x", pcs[j])
				}
				fmt.Fprintf(&b, "    #%-2d %-70s | %s\n", j, ours, theirs)
			}
			tally.disagree = append(tally.disagree, fmt.Sprintf("%s (%s): frame #%d past gdb's last (#%d): SFrame %#x %s, DWARF CFI walk %#x\n%s    end: %s",
				where, core, k, from-1, th.Frames[k].PC, th.Frames[k].Function, pcs[k], b.String(), th.End.Detail))
			return
		}
		tally.pastChecked++
	}
}

// regs returns the registers of thread tid, or nil.
func (p *pastGDB) regs(tid int) *unwind.Regs {
	for i := range p.proc.Threads {
		if p.proc.Threads[i].TID == tid {
			return &p.proc.Threads[i].Regs
		}
	}
	return nil
}

// callerSPFromSlot reports whether thread th's SFrame walk, equal to
// gdb's up to frame bad-1, leaves it at frame bad because an earlier
// frame's caller has a %r15 that is not CFA-160: the DWARF walk, which
// takes %r15 from the CFI's rule (its save slot, CFA-40), must find every
// one of gdb's frames, and find such a %r15 at a frame before bad-1 (the
// first wrong stack pointer, at frame bad-1 at the latest, gives a wrong
// return address, frame bad's PC). SFrame has no rule for %r15 (on s390x
// the caller's SP is always CFA-160), so such a stop is one it cannot
// describe: a function that returns through __builtin_eh_return, between
// the store of the handler's SP into the slot and the epilogue's lmg
// (docs/stack.md).
func (p *pastGDB) callerSPFromSlot(th threadStack, bad int, g []gdbFrame) bool {
	regs := p.regs(th.TID)
	if regs == nil || bad < 2 {
		return false
	}
	pcs := p.dw.walk(regs, nil)
	if len(pcs) < len(g) || len(p.dw.spDifferAt) == 0 || p.dw.spDifferAt[0] > bad-2 {
		return false
	}
	for j := range g {
		want := g[j].pc
		if g[j].signal {
			if j >= bad {
				return false
			}
			want = th.Frames[j].PC
		}
		if pcs[j] != want {
			return false
		}
	}
	return true
}

// compareThread compares one thread's SFrame walk with gdb's frames.
// A frame gdb prints as "?? ()" without a library is in a module gdb does
// not know, unless it is in bin, the program gdb was given (a stripped
// program's function that no symbol names).
//
// It returns how many of our frames gdb's check (the frames after those
// are for the DWARF walk, pastGDB) and the first frame whose PC is not
// gdb's, or -1.
func compareThread(tally *stackTally, where, bin, core string, th threadStack, g []gdbFrame) (checked, bad int) {
	if len(g) == 0 {
		// gdb could not walk even frame #0 (on qemu's s390x cores,
		// "PC not saved" for some stops in the dynamic linker's start).
		tally.gdbEarlier = append(tally.gdbEarlier, fmt.Sprintf("%s (%s): %d frames, gdb printed none", where, core, len(th.Frames)))
		return 0, -1
	}
	n := min(len(g), len(th.Frames))
	for k := range n {
		f := th.Frames[k]
		if g[k].signal != f.Signal || !g[k].signal && g[k].pc != f.PC {
			return len(th.Frames), k
		}
		if g[k].unknown && f.Module != "" && f.Module != bin && k+1 < len(th.Frames) {
			// gdb's frames past this one are guesses: compared with gdb
			// up to here, the rest with the DWARF walk.
			tally.gdbUnknown = append(tally.gdbUnknown, fmt.Sprintf("%s (%s): gdb knows no module at frame #%d %#x (%s; not yet in r_debug), compared %d of our %d frames with gdb's",
				where, core, k, f.PC, f.Module, k+1, len(th.Frames)))
			return k + 1, -1
		}
	}
	switch {
	case len(th.Frames)+1 == len(g) && th.End.Reason == unwind.EndZeroRA.String() && g[len(g)-1].pc == 0 && !g[len(g)-1].signal:
		// gdb prints the frame whose PC is 0, then stops: the same end.
	case len(th.Frames) < len(g):
		last := th.Frames[len(th.Frames)-1]
		tally.earlier = append(tally.earlier, fmt.Sprintf("%s (%s): %d frames, gdb %d: %s in %s+%#x (%s); gdb's next: %s",
			where, core, len(th.Frames), len(g), th.End.Detail, last.Function, last.Offset, last.Module, g[len(th.Frames)].text))
	case len(th.Frames) > len(g):
		note := "gdb printed no reason"
		if g[len(g)-1].note != "" {
			note = g[len(g)-1].note
		}
		tally.gdbEarlier = append(tally.gdbEarlier, fmt.Sprintf("%s (%s): %d frames, gdb %d (%s); our next: %#x %s",
			where, core, len(th.Frames), len(g), note, th.Frames[len(g)].PC, th.Frames[len(g)].Function))
	}
	return n, -1
}

// describeWalk prints both walks of a thread for a failure message.
func describeWalk(th threadStack, g []gdbFrame) string {
	var b strings.Builder
	for k := range max(len(th.Frames), len(g)) {
		ours, theirs := "", ""
		if k < len(th.Frames) {
			ours = fmt.Sprintf("%#x %s+%#x signal=%v", th.Frames[k].PC, th.Frames[k].Function, th.Frames[k].Offset, th.Frames[k].Signal)
		}
		if k < len(g) {
			theirs = g[k].text
		}
		fmt.Fprintf(&b, "    #%-2d %-50s | %s\n", k, ours, theirs)
	}
	fmt.Fprintf(&b, "    end: %s", th.End.Detail)
	return b.String()
}
