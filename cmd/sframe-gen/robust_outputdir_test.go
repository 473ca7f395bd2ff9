package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestOutputDirChangesOnlyWhatItMade: an unprivileged user (nobody,
// through setpriv) owns a source tree whose directories are 0777, 2777
// and (the root) 0700; root runs sframe-gen --output-dir over it. A
// directory of the output that was there before (root's, 0755) must keep
// its mode, not become world-writable (and a file there its owner and
// mode); the output root the run makes gets
// the source root's mode, so a 0700 tree's files stay private; the
// directories the run makes get their sources' modes (as cp -a).
func TestOutputDirChangesOnlyWhatItMade(t *testing.T) {
	sysfiles.NeedRoot(t, "files of other owners")
	setpriv := sysfiles.NeedProgram(t, "setpriv")
	bin := buildCommand(t)
	scratch, err := os.MkdirTemp("", "sframe-outdir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	os.Chmod(scratch, 0o755)
	exe := filepath.Join(scratch, "exe")
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/pie.exe"), exe)
	os.Chmod(exe, 0o755)
	home := filepath.Join(scratch, "home")
	os.Mkdir(home, 0o755)
	os.Chown(home, raceUID, raceUID)

	// asNobody runs a shell script as the unprivileged user.
	asNobody := func(script string) {
		t.Helper()
		out, err := exec.Command(setpriv, "--reuid", strconv.Itoa(raceUID), "--regid", strconv.Itoa(raceUID), "--clear-groups",
			"sh", "-ec", script).CombinedOutput()
		if err != nil {
			t.Fatalf("as nobody: %v\n%s", err, out)
		}
	}
	modeOf := func(p string) os.FileMode {
		t.Helper()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode() & (os.ModePerm | os.ModeSetgid | os.ModeSticky)
	}
	run := func(out, src string) {
		t.Helper()
		if b, err := exec.Command(bin, "-q", "--output-dir", out, src).CombinedOutput(); err != nil {
			t.Fatalf("sframe-gen: %v\n%s", err, b)
		}
	}

	t.Run("existing", func(t *testing.T) {
		src := filepath.Join(home, "src1")
		asNobody(fmt.Sprintf(`mkdir -p %[1]s/pub %[1]s/sg %[1]s/new
cp %[2]s %[1]s/pub/f; cp %[2]s %[1]s/sg/f; cp %[2]s %[1]s/new/f
chmod 0777 %[1]s %[1]s/pub %[1]s/new; chmod 2777 %[1]s/sg`, src, exe))
		out := filepath.Join(scratch, "out1")
		for _, d := range []string{out, filepath.Join(out, "pub"), filepath.Join(out, "sg")} {
			os.Mkdir(d, 0o755)
			os.Chmod(d, 0o755)
		}
		// A file already in the output keeps its own owner and mode (as
		// cp writes into an existing file), not its source's.
		existing := filepath.Join(out, "sg", "f")
		copyFile(t, exe, existing)
		os.Chown(existing, 0, 0)
		os.Chmod(existing, 0o640)
		run(out, src)
		if st, err := os.Stat(existing); err != nil || st.Mode() != 0o640 || st.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("%s, root's 0640 before the run: %v after it", existing, st.Mode())
		}
		if b := readFile(t, existing); bytes.Equal(b, readFile(t, exe)) {
			t.Errorf("%s was not written", existing)
		}
		for _, d := range []string{out, filepath.Join(out, "pub"), filepath.Join(out, "sg")} {
			if m := modeOf(d); m != 0o755 {
				t.Errorf("%s, root's and 0755 before the run, is %v after it: --output-dir changed a directory it did not make", d, m)
			}
		}
		if m := modeOf(filepath.Join(out, "new")); m != 0o777 {
			t.Errorf("%s, made by the run, is %v; want its source's 0777 (as cp -a)", filepath.Join(out, "new"), m)
		}
		if _, err := os.Stat(filepath.Join(out, "pub", "f")); err != nil {
			t.Errorf("the file was not written: %v", err)
		}
	})

	t.Run("private-root", func(t *testing.T) {
		src := filepath.Join(home, "src2")
		asNobody(fmt.Sprintf(`mkdir -p %[1]s/lib; cp %[2]s %[1]s/lib/f; chmod 0700 %[1]s`, src, exe))
		out := filepath.Join(scratch, "out2")
		run(out, src)
		if m := modeOf(out); m != 0o700 {
			t.Errorf("the output root made by the run is %v; want the source root's 0700, so the private tree's copies stay private", m)
		}
		if m := modeOf(filepath.Join(out, "lib")); m != 0o755 {
			t.Errorf("%s made by the run is %v; want its source's 0755", filepath.Join(out, "lib"), m)
		}
	})
}
