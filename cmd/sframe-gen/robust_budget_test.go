package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// measuredRun is one run of the built command with its peak memory.
type measuredRun struct {
	stdout  string
	stderr  string
	code    int
	maxRSS  int64 // bytes (getrusage ru_maxrss: VmHWM)
	elapsed time.Duration
}

// measureEnv=1 in the environment of the test binary makes it a small
// process that runs the command line its arguments give, prints "maxrss
// BYTES" and exits with its status (measuredChild). The measured command is its child, not the test's:
// os/exec starts a child with vfork, sharing the parent's memory until
// the exec, and the kernel carries that memory's high-water mark into the
// child's ru_maxrss, so a command started by the test would report the
// test's own peak (292 MiB after the damage test) however little it used.
const measureEnv = "SFRAME_GEN_MEASURE"

func init() {
	if os.Getenv(measureEnv) == "1" && len(os.Args) > 1 {
		os.Exit(measuredChild(os.Args[1:]))
	}
}

// measuredChild runs args, its output passed through, and prints its
// peak RSS on standard output, on a line of its own after the command's.
func measuredChild(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), measureEnv+"=", "GOGC=", "GOMEMLIMIT=")
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			fmt.Fprintln(os.Stderr, err)
			return 125
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		fmt.Printf("\nmaxrss %d\n", ru.Maxrss<<10)
	}
	return cmd.ProcessState.ExitCode()
}

// runMeasured runs the built binary bin, through the test binary as
// measuredChild, and returns its peak resident memory.
func runMeasured(t *testing.T, bin string, args ...string) measuredRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A run that waits for memory it holds itself must fail, not hang.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), measureEnv+"=1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	r := measuredRun{stderr: stderr.String(), elapsed: time.Since(start)}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	r.code = cmd.ProcessState.ExitCode()
	out, rss, _ := strings.Cut(stdout.String(), "\nmaxrss ")
	r.stdout = out
	if _, err := fmt.Sscanf(rss, "%d", &r.maxRSS); err != nil || r.code == 125 {
		t.Fatalf("measuring %s %v: %q, %q", bin, args, stdout.String(), stderr.String())
	}
	return r
}

// writeFile writes data to dir/name with a hole of hole bytes after it,
// and returns the path.
func writeFile(t *testing.T, dir, name string, data []byte, hole int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if hole > 0 {
		if err := os.Truncate(p, int64(len(data))+hole); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestMemoryBudget runs the built command on hostile files and measures
// its peak RSS against --memory-limit:
//   - a decompression bomb (256 KiB of zlib claiming 256 MiB of
//     .debug_frame) and a sparse 4 GiB object, each alone over the budget,
//     fail at once with the file and the limit named, in both forms;
//   - -j 4 over sparse 96 MiB objects (read whole) and bombs inside the
//     budget: every file done, the peak within the limit (the same files
//     with the limit lifted, logged for comparison, peaked at 424-440 MiB).
func TestMemoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: measures peak memory on hostile files (runs in make test-long)")
	}
	bin := buildCommand(t)
	dir := t.TempDir()
	obj := filepath.Join(testdataDir(), "gas/x86_64/debugframe.o")
	orig, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	big := writeFile(t, dir, "big.o", orig, 4<<30)
	if b := diskBytes(t, big); b > 1<<20 {
		t.Skipf("the file system does not keep holes (%d bytes on disk)", b)
	}
	bomb := writeFile(t, dir, "bomb.o", compressedBomb(t, obj, ".debug_frame", 256<<20, 0), 0)

	t.Run("alone over the budget", func(t *testing.T) {
		for _, tc := range []struct {
			file, want string
		}{
			{bomb, `needs about 2\.0 GiB of memory \(an object of 25\d\.\d KiB is read whole, its CFI inflated to 256 MiB\), over the memory limit of 256 MiB \(--memory-limit\)`},
			{big, `an object of 4\.0 GiB is not patched: objects are rewritten in memory, up to 1 GiB`},
		} {
			for _, form := range [][]string{{"-o", filepath.Join(dir, "out.o")}, {"-q", "-j", "4"}} {
				args := append(append([]string{"--memory-limit", "256M"}, form...), tc.file)
				r := runMeasured(t, bin, args...)
				want := fmt.Sprintf("^sframe-gen: %s: %s\n$", regexp.QuoteMeta(tc.file), tc.want)
				if r.code != exitFailure || !regexp.MustCompile(want).MatchString(r.stderr) {
					t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, want)
				}
				if r.elapsed > 5*time.Second || r.maxRSS > 64<<20 {
					t.Errorf("%v: %v, %d MiB: not refused before reading", args, r.elapsed, r.maxRSS>>20)
				}
			}
		}
	})

	t.Run("-j 4 within the budget", func(t *testing.T) {
		var files []string
		for i := range 4 {
			files = append(files, writeFile(t, dir, fmt.Sprintf("sparse%d.o", i), orig, 96<<20))
			files = append(files, writeFile(t, dir, fmt.Sprintf("bomb%d.o", i), compressedBomb(t, obj, ".debug_frame", 16<<20, 0), 0))
		}
		const limit = 352 << 20
		run := func(memLimit, out string) measuredRun {
			return runMeasured(t, bin, append([]string{"--memory-limit", memLimit, "-q", "-j", "4", "--output-dir", filepath.Join(dir, out)}, files...)...)
		}
		r := run("352M", "out")
		t.Logf("--memory-limit 352M -j 4: %d MiB peak, %v", r.maxRSS>>20, r.elapsed)
		if r.code != exitOK {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if r.maxRSS > limit {
			t.Errorf("peak RSS %d MiB, over the 352 MiB limit", r.maxRSS>>20)
		}
		free := run("8G", "out2") // for comparison: the same files, the limit lifted
		t.Logf("--memory-limit 8G -j 4: %d MiB peak, %v", free.maxRSS>>20, free.elapsed)
	})
}
