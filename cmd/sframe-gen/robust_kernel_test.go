package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"golang.org/x/sys/unix"
)

// The kernel suite (docs/robustness.md, "Names the user gave, and opens
// that could block"): an unprivileged user (nobody, through setpriv) plants
// symbolic links, files and FIFOs where a root run of sframe-gen will
// write, with the kernel's protections on as systemd sets them
// (fs.protected_symlinks, fs.protected_fifos, fs.protected_regular = 1).
// Nothing outside what the run was asked to write may change, and no run
// may hang (each runs under a timeout).

// kernelTimeout bounds every run of the suite: a run that blocks on a FIFO
// fails the test instead of hanging it.
const kernelTimeout = 60 * time.Second

// kernelProtections sets the kernel's protections of sticky world-writable
// directories for the test's duration, and restores them after.
func kernelProtections(t *testing.T) {
	t.Helper()
	sysfiles.NeedRoot(t, "sets the kernel's fs.protected_* settings")
	for _, name := range []string{"protected_symlinks", "protected_fifos", "protected_regular"} {
		p := "/proc/sys/fs/" + name
		old, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(p, []byte("1\n"), 0)
		}
		if err != nil {
			sysfiles.NeedInput(t, "cannot set fs.%s (a container with /proc/sys read-only?): %v", name, err)
		}
		t.Cleanup(func() { os.WriteFile(p, old, 0) })
	}
}

// kernelScratch is a directory every user can reach (the test's own
// t.TempDir is root's, 0700), removed after the test, holding sticky
// (1777, root's, as /tmp) and secret (0700, root's, with secret/file
// 0600 and secret/setuid, a setuid copy of a program).
type kernelScratch struct {
	dir, sticky, secret, file, setuid string
}

func newKernelScratch(t *testing.T) *kernelScratch {
	t.Helper()
	dir, err := os.MkdirTemp("", "sframe-kernel-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	s := &kernelScratch{dir: dir, sticky: filepath.Join(dir, "sticky"), secret: filepath.Join(dir, "secret")}
	if err := os.Mkdir(s.sticky, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(s.sticky, 0o777|os.ModeSticky)
	if err := os.Mkdir(s.secret, 0o700); err != nil {
		t.Fatal(err)
	}
	s.file = filepath.Join(s.secret, "file")
	if err := os.WriteFile(s.file, []byte("root's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.setuid = filepath.Join(s.secret, "setuid")
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/pie.exe"), s.setuid)
	os.Chmod(s.setuid, 0o755|os.ModeSetuid)
	return s
}

// kernelFileState is what must not change of a file: its bytes, inode, owner, mode
// and change time (not following a link).
func kernelFileState(t *testing.T, p string) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return "absent: " + err.Error()
	}
	b, _ := os.ReadFile(p)
	return fmt.Sprintf("%x ino %d uid %d mode %o ctime %d.%d", sha256.Sum256(b), st.Ino, st.Uid, st.Mode, st.Ctim.Sec, st.Ctim.Nsec)
}

// asNobody runs a command as nobody (setpriv), failing the test if it
// fails.
func asNobody(t *testing.T, args ...string) {
	t.Helper()
	setpriv := sysfiles.NeedProgram(t, "setpriv")
	cmd := exec.Command(setpriv, append([]string{"--reuid", strconv.Itoa(raceUID), "--regid", strconv.Itoa(raceUID), "--clear-groups"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %v: %v\n%s", args, err, out)
	}
}

// runBounded runs the command bin with args under kernelTimeout; a run
// that does not end in time is a failure of the test (it hung).
func runBounded(t *testing.T, bin string, args ...string) (stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kernelTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("sframe-gen %s hung (killed after %v)", strings.Join(args, " "), kernelTimeout)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return e.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return e.String(), 0
}

// TestKernelResolvesNames plants, as nobody in a sticky world-writable
// directory, a symbolic link or a file at each name a root run is given to
// write (-o, a single FILE, --report, --raw -o): the kernel refuses root to
// follow such a link (fs.protected_symlinks) or to open such a file for
// creating (fs.protected_regular), and so must the run; root's own link
// there is followed.
func TestKernelResolvesNames(t *testing.T) {
	kernelProtections(t)
	bin := buildCommand(t)
	exe := filepath.Join(testdataDir(), "link/x86_64/pie.exe")
	for _, tc := range []struct {
		name    string
		plant   func(s *kernelScratch, at string) // as nobody, at the name given
		args    func(s *kernelScratch, at, tree string) []string
		victim  func(s *kernelScratch) string
		wantErr string
	}{
		{"-o through a link", plantLink((*kernelScratch).fileOf), func(s *kernelScratch, at, tree string) []string { return []string{"-o", at, exe} },
			(*kernelScratch).fileOf, "permission denied"},
		{"FILE through a link", plantLink((*kernelScratch).setuidOf), func(s *kernelScratch, at, tree string) []string { return []string{at} },
			(*kernelScratch).setuidOf, "permission denied"},
		{"--report through a link", plantLink((*kernelScratch).fileOf), func(s *kernelScratch, at, tree string) []string { return []string{"-q", "--report", at, tree} },
			(*kernelScratch).fileOf, "--report: permission denied"},
		{"--raw -o through a link", plantLink((*kernelScratch).fileOf), func(s *kernelScratch, at, tree string) []string { return []string{"--raw", "-o", at, exe} },
			(*kernelScratch).fileOf, "permission denied"},
		{"-o over nobody's file", plantFile, func(s *kernelScratch, at, tree string) []string { return []string{"-o", at, exe} },
			func(s *kernelScratch) string { return filepath.Join(s.sticky, "target") }, "permission denied"},
		{"--report over nobody's file", plantFile, func(s *kernelScratch, at, tree string) []string { return []string{"-q", "--report", at, tree} },
			func(s *kernelScratch) string { return filepath.Join(s.sticky, "target") }, "--report: permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newKernelScratch(t)
			tree := filepath.Join(s.dir, "tree")
			os.Mkdir(tree, 0o755)
			copyFile(t, exe, filepath.Join(tree, "f"))
			treeBefore := kernelFileState(t, filepath.Join(tree, "f"))
			at := filepath.Join(s.sticky, "target")
			tc.plant(s, at)
			victim := tc.victim(s)
			before := kernelFileState(t, victim)
			stderr, code := runBounded(t, bin, tc.args(s, at, tree)...)
			if code == 0 || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want a failure with %q", code, stderr, tc.wantErr)
			}
			if after := kernelFileState(t, victim); after != before {
				t.Errorf("%s was written through the planted name: %s, was %s", victim, after, before)
			}
			if after := kernelFileState(t, filepath.Join(tree, "f")); after != treeBefore {
				t.Errorf("the tree was patched before the target was refused")
			}
		})
	}
	t.Run("root's own link is followed", func(t *testing.T) {
		s := newKernelScratch(t)
		out := filepath.Join(s.secret, "out")
		at := filepath.Join(s.sticky, "mine")
		if err := os.Symlink(out, at); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(out, []byte("old"), 0o640)
		if stderr, code := runBounded(t, bin, "-o", at, exe); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if fi, err := os.Lstat(at); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link: %v", at, err)
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() < 100 || fi.Mode().Perm() != 0o640 {
			t.Errorf("the link's target was not replaced (mode kept): %v %v", fi, err)
		}
	})
}

func (s *kernelScratch) fileOf() string   { return s.file }
func (s *kernelScratch) setuidOf() string { return s.setuid }

// plantLink plants, as nobody, a link at the name to the victim.
func plantLink(victim func(*kernelScratch) string) func(*kernelScratch, string) {
	return func(s *kernelScratch, at string) {
		cmd := exec.Command(needToolQuiet("setpriv"), "--reuid", strconv.Itoa(raceUID), "--regid", strconv.Itoa(raceUID), "--clear-groups", "ln", "-s", victim(s), at)
		if out, err := cmd.CombinedOutput(); err != nil {
			panic(fmt.Sprintf("planting %s: %v %s", at, err, out))
		}
	}
}

// plantFile makes, as nobody, a world-writable file at the name.
func plantFile(s *kernelScratch, at string) {
	cmd := exec.Command(needToolQuiet("setpriv"), "--reuid", strconv.Itoa(raceUID), "--regid", strconv.Itoa(raceUID), "--clear-groups", "sh", "-c", "umask 0; echo nobody > \"$1\"", "sh", at)
	if out, err := cmd.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("planting %s: %v %s", at, err, out))
	}
}

// needToolQuiet is the path of a tool kernelProtections' callers checked.
func needToolQuiet(name string) string {
	p, _ := exec.LookPath(name)
	return p
}

// TestKernelReportLinkDuringRun plants, as nobody, a link to root's file
// at the --report name while the run goes on (when it opens the tree's
// file, inotify): the report, resolved before the work, replaces what is
// at its name in the directory it holds, never following what was planted.
func TestKernelReportLinkDuringRun(t *testing.T) {
	if os.Getenv("SFRAME_RACE_ATTACKER") != "" {
		t.Skip("the attacker's process")
	}
	kernelProtections(t)
	setpriv := sysfiles.NeedProgram(t, "setpriv")
	s := newKernelScratch(t)
	bin := buildCommand(t)
	attackerBin := filepath.Join(s.dir, "attacker")
	copyFile(t, os.Args[0], attackerBin)
	os.Chmod(attackerBin, 0o755)
	exe := filepath.Join(testdataDir(), "link/x86_64/pie.exe")
	att := startAttacker(t, setpriv, attackerBin)
	before := kernelFileState(t, s.file)
	tree := filepath.Join(s.dir, "tree")
	attempts := 40
	if testing.Short() {
		attempts = 10
	}
	planted := 0
	for i := range attempts {
		os.RemoveAll(tree)
		os.Mkdir(tree, 0o755)
		copyFile(t, exe, filepath.Join(tree, "report"))
		rep := filepath.Join(s.sticky, "report")
		os.Remove(rep)
		att.arm(t, "out", tree, "report", s.file, s.secret, s.sticky)
		stderr, _ := runBounded(t, bin, "-q", "--report", rep, tree)
		if att.done(t) {
			planted++
		}
		if after := kernelFileState(t, s.file); after != before {
			t.Fatalf("attempt %d: root's file was replaced by the report through the planted link: %s, was %s\nstderr: %s", i, after, before, stderr)
		}
	}
	t.Logf("%d attempts, %d links planted; root's file untouched", attempts, planted)
	if planted == 0 {
		t.Errorf("no link was planted: the test did not race")
	}
}

// TestKernelNothingBlocks plants, as nobody, a FIFO at the --report and
// --raw -o names of a root run, in a sticky world-writable directory (the
// kernel's fs.protected_fifos refuses root's creating open) and in a
// directory of nobody's own (no kernel protection: sframe-gen's own rule,
// a FIFO is written only when it is the user's own): the run must refuse
// it at once, before any file is patched (an open for writing would wait
// for a reader forever).
func TestKernelNothingBlocks(t *testing.T) {
	kernelProtections(t)
	bin := buildCommand(t)
	exe := filepath.Join(testdataDir(), "link/x86_64/pie.exe")
	for _, tc := range []struct {
		name string
		args func(at, tree string) []string
	}{
		{"--report", func(at, tree string) []string { return []string{"-q", "--report", at, tree} }},
		{"--raw -o", func(at, tree string) []string { return []string{"--raw", "-o", at, filepath.Join(tree, "f")} }},
	} {
		for _, where := range []struct{ dir, want string }{{"sticky", "permission denied"}, {"nobody", "a FIFO of user 65534"}} {
			t.Run(tc.name+" in "+where.dir, func(t *testing.T) {
				s := newKernelScratch(t)
				tree := filepath.Join(s.dir, "tree")
				os.Mkdir(tree, 0o755)
				copyFile(t, exe, filepath.Join(tree, "f"))
				treeBefore := kernelFileState(t, filepath.Join(tree, "f"))
				dir := s.sticky
				if where.dir == "nobody" {
					dir = filepath.Join(s.dir, "nobody")
					os.Mkdir(dir, 0o755)
					os.Chown(dir, raceUID, raceUID)
				}
				at := filepath.Join(dir, "fifo")
				asNobody(t, "mkfifo", at)
				stderr, code := runBounded(t, bin, tc.args(at, tree)...)
				if code == 0 || !strings.Contains(stderr, where.want) {
					t.Errorf("exit %d, stderr %q; want the FIFO refused: %q", code, stderr, where.want)
				}
				if after := kernelFileState(t, filepath.Join(tree, "f")); after != treeBefore {
					t.Errorf("the tree was patched")
				}
			})
		}
	}
}

// TestKernelWalkFlip has nobody flip a tree entry between a directory and
// a link to a root-only directory (renameat2 RENAME_EXCHANGE, as fast as it
// can) while root runs the batch over the tree: the names inside the
// root-only directory must never appear in a message or the report.
func TestKernelWalkFlip(t *testing.T) {
	if os.Getenv("SFRAME_FLIPPER") != "" {
		flip(os.Getenv("SFRAME_FLIPPER"))
		return
	}
	kernelProtections(t)
	setpriv := sysfiles.NeedProgram(t, "setpriv")
	s := newKernelScratch(t)
	bin := buildCommand(t)
	const secretName = "SECRET-NAME-inside-root-only"
	os.WriteFile(filepath.Join(s.secret, secretName), []byte("x"), 0o600)
	tree := filepath.Join(s.dir, "tree")
	os.Mkdir(tree, 0o755)
	os.Chown(tree, raceUID, raceUID)
	asNobody(t, "sh", "-c", `mkdir "$1/d" && touch "$1/d/pub" && ln -s "$2" "$1/x"`, "sh", tree, s.secret)
	flipperBin := filepath.Join(s.dir, "flipper")
	copyFile(t, os.Args[0], flipperBin)
	os.Chmod(flipperBin, 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	flipper := exec.CommandContext(ctx, setpriv, "--reuid", strconv.Itoa(raceUID), "--regid", strconv.Itoa(raceUID), "--clear-groups",
		flipperBin, "-test.run", "^TestKernelWalkFlip$")
	flipper.Env = append(os.Environ(), "SFRAME_FLIPPER="+tree)
	if err := flipper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); flipper.Wait() }()
	runs := 200
	if testing.Short() {
		runs = 50
	}
	rep := filepath.Join(s.secret, "report")
	listed := 0
	for i := range runs {
		stderr, _ := runBounded(t, bin, "--report", rep, tree)
		b, _ := os.ReadFile(rep)
		if strings.Contains(stderr, secretName) || bytes.Contains(b, []byte(secretName)) {
			t.Fatalf("run %d: a name inside the root-only directory leaked:\nstderr: %s\nreport: %s", i, stderr, b)
		}
		if bytes.Contains(b, []byte(`d/pub"`)) {
			listed++
		}
	}
	t.Logf("%d runs, %d listed the directory while it was one; no name leaked", runs, listed)
}

// flip exchanges tree/d and tree/x until killed.
func flip(tree string) {
	d, x := filepath.Join(tree, "d"), filepath.Join(tree, "x")
	for {
		unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, x, unix.RENAME_EXCHANGE)
	}
}

// TestReportNamesExact checks --report's names: each line one word for a
// reader that splits at white space or colons (a name cannot put a word
// of its choice on a line of its own), names not UTF-8 exact in their
// _bytes field, and a new report readable by its owner only.
func TestReportNamesExact(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(testdataDir(), "link/x86_64/pie.exe")
	tree := filepath.Join(dir, "tree")
	os.Mkdir(tree, 0o755)
	// Paths below the tree: a name and its directories make the word.
	names := []string{"x /tmp/evil.so y", "a:/tmp/evil.so", "line\n/tmp/evil.so", "\xff\xferaw"}
	for _, n := range names {
		p := filepath.Join(tree, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		copyFile(t, exe, p)
	}
	rep := filepath.Join(dir, "report.json")
	if _, stderr, code := runCLI("-q", "--report", rep, tree); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(rep); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new report: %v %v; want mode 0600", fi.Mode(), err)
	}
	for _, word := range strings.FieldsFunc(string(b), func(r rune) bool { return strings.ContainsRune(" \t\n:", r) }) {
		if word == "/tmp/evil.so" {
			t.Errorf("a name put a word of its own on a line of the report:\n%s", b)
		}
	}
	got := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var l struct {
			File      string `json:"file"`
			FileBytes []byte `json:"file_bytes"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		name := l.File
		if l.FileBytes != nil {
			name = string(l.FileBytes)
		}
		rel, _ := filepath.Rel(tree, name)
		got[rel] = true
	}
	for _, n := range names {
		if !got[n] {
			t.Errorf("%q not in the report exactly:\n%s", n, b)
		}
	}
	// docs/batch.md's example, run.
	doc, err := os.ReadFile(filepath.Join(testdataDir(), "..", "docs", "batch.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, example, ok := strings.Cut(string(doc), "writes (`TestReportNamesExact` runs it):\n\n```json\n")
	example, _, _ = strings.Cut(example, "\n")
	ex := t.TempDir()
	os.Mkdir(filepath.Join(ex, "bin"), 0o755)
	copyFile(t, exe, filepath.Join(ex, "bin", "caf\xe9"))
	cmd := exec.Command(buildCommand(t), "-q", "--report", "-", "bin")
	cmd.Dir = ex
	out, err := cmd.Output()
	if !ok || err != nil || strings.TrimSpace(string(out)) != example {
		t.Errorf("docs/batch.md's example: %q (%v), the run writes %q", example, err, out)
	}
}
