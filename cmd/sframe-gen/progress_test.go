package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"golang.org/x/sys/unix"
)

// TestProgressLine draws the status line into a buffer standing for a
// terminal: counts, bytes, time left, the current file; messages clear it
// and it is drawn again below them; stop clears it.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	p := &progress{w: &buf, tty: null, files: 4, total: 4 << 20, running: map[string]runningFile{}}
	p.began = time.Now().Add(-time.Second)
	p.running["lib/libfoo.so"] = runningFile{size: 1 << 20, started: p.began}
	p.finish("lib/libfoo.so", 1<<20) // 1 MiB in 1 s: 3 s for the 3 MiB left
	p.start("lib/libbar.so", 1<<20)
	p.draw()
	line := buf.String()
	for _, want := range []string{"\r\x1b[K", "1/4 files", "1.0 MiB/4.0 MiB", "3s left", ": lib/libbar.so"} {
		if !strings.Contains(line, want) {
			t.Errorf("status line %q lacks %q", line, want)
		}
	}
	buf.Reset()
	p.print([]byte("sframe-gen: x: broken\n"))
	if got := buf.String(); !strings.HasPrefix(got, "\r\x1b[Ksframe-gen: x: broken\n\r\x1b[K1/4 files") {
		t.Errorf("message not printed over a cleared line, status drawn again: %q", got)
	}
	buf.Reset()
	p.current = strings.Repeat("very/long/path/", 20) + "end.so"
	p.draw()
	if got := buf.String(); len(got) > 80+4 || !strings.HasSuffix(got, "end.so") || !strings.Contains(got, "...") {
		t.Errorf("long path not cut to the terminal's 80 columns: %q", got)
	}

	// Not a terminal: messages only.
	buf.Reset()
	q := newProgress(&buf, false, 4, 100)
	q.start("a", 1)
	q.print([]byte("msg\n"))
	q.stop()
	if buf.String() != "msg\n" {
		t.Errorf("without a terminal: %q", buf.String())
	}
}

// TestProgressLeft checks the estimate of the time left: the bytes left
// at the rate of the bytes done, a file in progress counting what a worker
// does in the time it has had at the finished files' rate.
func TestProgressLeft(t *testing.T) {
	const MB = 1 << 20
	now := time.Unix(1000, 0)
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	type file struct {
		size   int64
		took   float64 // seconds, of a finished file
		since  float64 // seconds, of a file in progress
		notYet bool
	}
	for _, tc := range []struct {
		name    string
		elapsed float64 // since the first file began
		files   []file
		want    time.Duration
	}{
		// 2 MB in 2 s: 2 MB left at 1 MB/s.
		{"one worker", 2, []file{{size: 1 * MB, took: 1}, {size: 1 * MB, took: 1}, {size: 2 * MB, notYet: true}}, sec(2)},
		// Two workers, a 1 MB file done in 1 s, a 4 MB one begun with it:
		// it counts 1 MB; 2 MB done in 1 s, 3 MB left: 1.5 s.
		{"a big file in progress counts", 1, []file{{size: 1 * MB, took: 1}, {size: 4 * MB, since: 1}}, sec(1.5)},
		// ...but never more than its size.
		{"up to its size", 2, []file{{size: 2 * MB, took: 1}, {size: 1 * MB, since: 2}, {size: 3 * MB, notYet: true}}, sec(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &progress{running: map[string]runningFile{}, began: now.Add(-sec(tc.elapsed))}
			for i, f := range tc.files {
				p.files++
				p.total += f.size
				name := strconv.Itoa(i)
				switch {
				case f.notYet:
				case f.took > 0:
					p.running[name] = runningFile{size: f.size, started: time.Now().Add(-sec(f.took))}
					p.finish(name, f.size)
				default:
					p.running[name] = runningFile{size: f.size, started: now.Add(-sec(f.since))}
				}
			}
			got, ok := p.left(now)
			if !ok || (got-tc.want).Abs() > 5*time.Millisecond {
				t.Errorf("left %v (%v), want %v", got, ok, tc.want)
			}
		})
	}
	if _, ok := (&progress{files: 3, running: map[string]runningFile{}}).left(now); ok {
		t.Error("an estimate before any file is finished")
	}
}

// TestProgressTerminal runs the batch form on a pseudo-terminal (script
// from util-linux): the status line appears and is cleared, the summary
// follows; with -q neither.
func TestProgressTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs batches on a pseudo-terminal (runs in make test-long)")
	}
	script := sysfiles.NeedProgram(t, "script")
	dir := t.TempDir()
	bin := filepath.Join(dir, "sframe-gen")
	if out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tree := filepath.Join(dir, "tree")
	os.Mkdir(tree, 0o755)
	for i := range 40 {
		copyFile(t, filepath.Join(testdataDir(), "link/x86_64/tree-sitter.exe"), filepath.Join(tree, string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	run := func(args string) string {
		out, err := exec.Command(script, "-qec", bin+" "+args+" "+tree, os.DevNull).CombinedOutput()
		if err != nil {
			t.Fatalf("script: %v\n%s", err, out)
		}
		return string(out)
	}
	out := run("-j 1")
	if !strings.Contains(out, "/40 files") || !strings.Contains(out, "\r\x1b[K") {
		t.Errorf("no status line on the terminal: %q", out)
	}
	if !strings.Contains(out, "\r\x1b[Ksframe-gen: 40 files: 40 patched") {
		t.Errorf("status line not cleared before the summary: %q", out)
	}
	if out := run("-q"); out != "" {
		t.Errorf("-q printed %q", out)
	}
}

// TestProgressCountsFilesOnly runs the batch form on a pseudo-terminal
// over a tree with symbolic links (sorted before the files, so they are
// done first), a dangling one, a hard link, a FIFO and a subdirectory:
// every status line counts at most the regular files it was given, and
// its total is their number (hard links once).
func TestProgressCountsFilesOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs batches on a pseudo-terminal (runs in make test-long)")
	}
	script := sysfiles.NeedProgram(t, "script")
	bin := buildCommand(t)
	tree := filepath.Join(t.TempDir(), "tree")
	os.MkdirAll(filepath.Join(tree, "sub"), 0o755)
	exe := filepath.Join(testdataDir(), "link/x86_64/tree-sitter.exe")
	var files []string
	for i := range 8 {
		files = append(files, filepath.Join(tree, fmt.Sprintf("f%d", i)))
	}
	files = append(files, filepath.Join(tree, "sub", "g0"), filepath.Join(tree, "sub", "g1"))
	for _, f := range files {
		copyFile(t, exe, f)
	}
	for i := range 20 {
		if err := os.Symlink(files[i%len(files)], filepath.Join(tree, fmt.Sprintf("0link%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("nowhere", filepath.Join(tree, "0dangling")))
	must(os.Link(files[0], filepath.Join(tree, "f0-again")))
	must(syscall.Mkfifo(filepath.Join(tree, "0fifo"), 0o644))

	// -v: every patched file prints a line, and the status line is drawn
	// again below it with the counts of that moment.
	out, err := exec.Command(script, "-qec", bin+" -v -j 1 "+tree, os.DevNull).CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	lines := regexp.MustCompile(`(\d+)/(\d+) files`).FindAllStringSubmatch(string(out), -1)
	if len(lines) < len(files) {
		t.Fatalf("%d status lines, want one after each of the %d files: %q", len(lines), len(files), out)
	}
	for _, m := range lines {
		done, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		if total != len(files) || done > total {
			t.Fatalf("status line %q: want at most %d of %d regular files\n%s", m[0], len(files), len(files), out)
		}
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d files: %d patched", len(files)+22, len(files))) {
		t.Errorf("summary: %q", out)
	}
}

// TestProgressEstimateTruthful runs the batch form with -j 2 on a
// pseudo-terminal over a tree of mixed sizes (a few copies of the C
// library and of libstdc++, many small objects: big files go first) and
// reads each status line as it is drawn: once 3% of the bytes are done,
// no "left" may exceed twice the time the run then really took to end
// (plus a second: the line rounds to seconds).
func TestProgressEstimateTruthful(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a timed batch on a pseudo-terminal (runs in make test-long)")
	}
	bin := buildCommand(t)
	tree := filepath.Join(t.TempDir(), "tree")
	os.Mkdir(tree, 0o755)
	libc := sysfiles.CompilerLib(t, "gcc", "libc.so.6")
	libstdcxx := sysfiles.CompilerLib(t, "g++", "libstdc++.so.6")
	// Big enough for a run of several seconds on an idle 2-core
	// machine: a status line every 150 ms, a dozen or more past 3%.
	for i := range 6 {
		copyFile(t, libc, filepath.Join(tree, fmt.Sprintf("libc%d.so", i)))
		copyFile(t, libstdcxx, filepath.Join(tree, fmt.Sprintf("libstdcxx%d.so", i)))
	}
	smalls, _ := filepath.Glob(filepath.Join(testdataDir(), "gas", "*", "*.o"))
	for i := range 2000 {
		copyFile(t, smalls[i%len(smalls)], filepath.Join(tree, fmt.Sprintf("obj%04d.o", i)))
	}
	master, slave := openPTY(t)
	cmd := exec.Command(bin, "-j", "2", tree)
	cmd.Stdout, cmd.Stderr = slave, slave
	type drawn struct {
		at   time.Time
		line string
	}
	lines := make(chan drawn, 1024)
	go func() {
		defer close(lines)
		buf := make([]byte, 1<<16)
		for {
			n, err := master.Read(buf)
			at := time.Now()
			for _, l := range strings.Split(string(buf[:n]), "\r\x1b[K") {
				if l != "" {
					lines <- drawn{at, l}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sframe-gen: %v", err)
	}
	end := time.Now()
	master.Close()
	status := regexp.MustCompile(`^(\d+)/(\d+) files, ([\d.]+) MiB/([\d.]+) MiB, (\S+) left`)
	checked := 0
	for d := range lines {
		m := status.FindStringSubmatch(d.line)
		if m == nil {
			continue
		}
		done, _ := strconv.ParseFloat(m[3], 64)
		total, _ := strconv.ParseFloat(m[4], 64)
		left, err := time.ParseDuration(m[5])
		if err != nil || total == 0 {
			t.Fatalf("status line %q", d.line)
		}
		real := end.Sub(d.at)
		if done/total < 0.03 {
			continue
		}
		checked++
		if left > 2*real+time.Second {
			t.Errorf("at %.1f%% done: %v left, the run ended %v later", 100*done/total, left, real.Round(time.Millisecond))
		}
	}
	if checked < 3 {
		t.Errorf("only %d status lines with an estimate past 3%% (the run took too little to judge?)", checked)
	}
	t.Logf("%d estimates checked", checked)
}

// openPTY opens a pseudo-terminal pair, 200 columns wide.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		sysfiles.NeedInput(t, "no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 200})
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}
