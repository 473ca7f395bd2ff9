package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"golang.org/x/sys/unix"
)

// The race suite: sframe-gen runs as root over a tree that an unprivileged
// user (nobody, through setpriv) may write, and that user swaps a file or
// a directory of it for a symbolic link to a victim outside the tree (a
// setuid-root program) at the moment sframe-gen opens the file (inotify),
// after a random delay. Whatever the timing, the victim must never be
// written: same bytes, inode, mode and change time.

// raceAttempts is the number of attempts of each form: 1000 (the issue's
// bound), 50 with -short.
func raceAttempts() int {
	if n, err := strconv.Atoi(os.Getenv("SFRAME_RACE_ATTEMPTS")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return 50
	}
	return 1000
}

// raceUID is the attacker's user and group.
const raceUID = 65534

// TestRaceSymlinkSwap runs the attempts in the single-file, batch and
// --output-dir forms.
func TestRaceSymlinkSwap(t *testing.T) {
	if os.Getenv("SFRAME_RACE_ATTACKER") != "" {
		t.Skip("the attacker's process")
	}
	sysfiles.NeedRoot(t, "attacks as another user")
	setpriv := sysfiles.NeedProgram(t, "setpriv")
	scratch, err := os.MkdirTemp("", "sframe-race-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	os.Chmod(scratch, 0o755)
	bin := buildCommand(t)
	// The attacker is this test binary again, as nobody: copied where
	// nobody can run it.
	attackerBin := filepath.Join(scratch, "attacker")
	copyFile(t, os.Args[0], attackerBin)
	os.Chmod(attackerBin, 0o755)
	exe := filepath.Join(testdataDir(), "link/x86_64/pie.exe")

	outside := filepath.Join(scratch, "outside")
	os.Mkdir(outside, 0o755)
	victim := filepath.Join(outside, "f")
	copyFile(t, exe, victim)
	os.Chmod(victim, 0o755|os.ModeSetuid)
	victimState := func() string {
		var st syscall.Stat_t
		if err := syscall.Lstat(victim, &st); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x ino %d mode %o ctime %d.%d", sha256.Sum256(readFile(t, victim)), st.Ino, st.Mode, st.Ctim.Sec, st.Ctim.Nsec)
	}
	victimBefore := victimState()

	att := startAttacker(t, setpriv, attackerBin)
	tree := filepath.Join(scratch, "tree")
	out := filepath.Join(scratch, "out")
	for _, form := range []string{"single", "batch", "output-dir"} {
		t.Run(form, func(t *testing.T) {
			swapped, refused := 0, 0
			for i := range raceAttempts() {
				os.RemoveAll(tree)
				mode := []string{"file", "dir"}[i%2]
				var args []string
				var target, watch string
				switch form {
				case "single":
					target = makeRaceTree(t, tree, exe, "sub", "f", 0o755)
					args = []string{target}
				case "batch":
					target = makeRaceTree(t, tree, exe, "sub", "f", 0o755)
					args = []string{"-q", tree}
				case "output-dir":
					// A world-writable sticky source directory: its mirror
					// must not let nobody plant a link that is then
					// written through.
					if i == 0 {
						os.RemoveAll(out)
					}
					name := fmt.Sprintf("f%d", i)
					target = makeRaceTree(t, tree, exe, "pub", name, 0o1777)
					args = []string{"-q", "--output-dir", out, tree}
					mode = "out"
				}
				watch = filepath.Dir(target)
				att.arm(t, mode, watch, filepath.Base(target), victim, outside, filepath.Join(out, "pub"))
				cmd := exec.Command(bin, args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				if att.done(t) {
					swapped++
				}
				if err != nil {
					refused++
					if strings.Contains(stderr.String(), "panic") {
						t.Fatalf("sframe-gen panicked:\n%s", stderr.String())
					}
				}
				if got := victimState(); got != victimBefore {
					t.Fatalf("attempt %d (%s, %s): the victim outside the tree was written: %s, was %s\nstderr:\n%s", i, form, mode, got, victimBefore, stderr.String())
				}
			}
			t.Logf("%s: %d attempts, %d swaps during the run, %d runs that refused a file; victim untouched", form, raceAttempts(), swapped, refused)
			if swapped == 0 {
				t.Errorf("no swap happened while sframe-gen ran: the test did not race")
			}
		})
	}
}

// makeRaceTree makes tree/dir/name, a copy of exe, the directories mode
// 0755 (dir: dirMode) and owned by nobody (dir with dirMode 01777: by
// root), the file owned by nobody; it returns the file's path.
func makeRaceTree(t *testing.T, tree, exe, dir, name string, dirMode os.FileMode) string {
	t.Helper()
	sub := filepath.Join(tree, dir)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(tree, raceUID, raceUID)
	if dirMode&0o1000 == 0 {
		os.Chown(sub, raceUID, raceUID)
	}
	os.Chmod(sub, dirMode|os.ModeDir)
	if dirMode&0o1000 != 0 {
		os.Chmod(sub, 0o777|os.ModeSticky)
	}
	// Decoys around the target, so the walk and the work take a while.
	for k := range 3 {
		p := filepath.Join(tree, fmt.Sprintf("a%d", k))
		copyFile(t, exe, p)
	}
	p := filepath.Join(sub, name)
	copyFile(t, exe, p)
	os.Chown(p, raceUID, raceUID)
	return p
}

// attacker is the process of the unprivileged user.
type attacker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startAttacker(t *testing.T, setpriv, bin string) *attacker {
	t.Helper()
	cmd := exec.Command(setpriv, "--reuid", strconv.Itoa(raceUID), "--regid", strconv.Itoa(raceUID), "--clear-groups",
		bin, "-test.run", "^TestRaceAttacker$")
	cmd.Env = append(os.Environ(), "SFRAME_RACE_ATTACKER=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return &attacker{cmd: cmd, in: in, out: bufio.NewReader(outPipe)}
}

// arm tells the attacker to watch dir for the opening of name and then to
// swap (mode file: the file for a link to victim; dir: the directory for
// a link to outside; out: plant a link to victim at outDir/name).
func (a *attacker) arm(t *testing.T, mode, dir, name, victim, outside, outDir string) {
	t.Helper()
	fmt.Fprintf(a.in, "arm %s %s %s %s %s %s\n", mode, dir, name, victim, outside, outDir)
	if line := a.line(t); line != "armed" {
		t.Fatalf("attacker: %q", line)
	}
}

// done ends the attempt; it reports whether the attacker swapped.
func (a *attacker) done(t *testing.T) bool {
	t.Helper()
	fmt.Fprintln(a.in, "done")
	return a.line(t) == "swapped"
}

func (a *attacker) line(t *testing.T) string {
	t.Helper()
	s, err := a.out.ReadString('\n')
	if err != nil {
		t.Fatalf("attacker: %v", err)
	}
	return strings.TrimSpace(s)
}

// TestRaceAttacker is the attacker's side of TestRaceSymlinkSwap, run as
// nobody in a process of its own; it does nothing in a normal test run.
func TestRaceAttacker(t *testing.T) {
	if os.Getenv("SFRAME_RACE_ATTACKER") == "" {
		return
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 7 || f[0] != "arm" {
			continue
		}
		swapped := runAttack(f[1], f[2], f[3], f[4], f[5], f[6], func() { fmt.Println("armed") }, func() bool {
			return in.Scan() // "done"
		})
		if swapped {
			fmt.Println("swapped")
		} else {
			fmt.Println("idle")
		}
	}
}

// runAttack watches dir until name is opened, then swaps at once or after
// a random 0-2 ms; it returns once waitDone does, reporting whether it swapped.
func runAttack(mode, dir, name, victim, outside, outDir string, armed func(), waitDone func() bool) bool {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err == nil {
		defer unix.Close(fd)
		_, err = unix.InotifyAddWatch(fd, dir, unix.IN_OPEN)
	}
	if err != nil {
		armed()
		waitDone()
		return false
	}
	swap := func() bool {
		switch mode {
		case "file":
			os.Rename(filepath.Join(dir, name), filepath.Join(dir, name+".orig"))
			return os.Symlink(victim, filepath.Join(dir, name)) == nil
		case "dir":
			os.Rename(dir, dir+".orig")
			return os.Symlink(outside, dir) == nil
		case "out":
			return os.Symlink(victim, filepath.Join(outDir, name)) == nil
		}
		return false
	}
	swapped, early := false, mode == "out" && rand.IntN(2) == 0
	if early {
		swapped = swap()
	}
	armed()
	done := make(chan bool)
	go func() { done <- waitDone() }()
	buf := make([]byte, 4096)
	for {
		select {
		case <-done:
			return swapped
		default:
		}
		if swapped {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		if opened(fd, name, buf) {
			// Half the swaps at once (the window between opening and
			// deciding where to write), half within 2 ms (the writing).
			if rand.IntN(2) == 0 {
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			}
			swapped = swap()
		}
	}
}

// opened waits up to a millisecond for an inotify event on fd about name.
func opened(fd int, name string, buf []byte) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, _ := unix.Poll(pfd, 1); n <= 0 {
		return false
	}
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return false
	}
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		end := off + unix.SizeofInotifyEvent + int(ev.Len)
		if end > n {
			break
		}
		if string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:end], "\x00")) == name {
			return true
		}
		off = end
	}
	return false
}
