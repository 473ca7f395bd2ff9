package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// metadata is what getfattr, getfacl and stat say of a file: every
// attribute sframe-gen must keep.
func metadata(t *testing.T, p string) string {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"getfattr", "--absolute-names", "-d", "-m", "-", "-e", "hex", p},
		{"getfacl", "--absolute-names", "-p", p},
		{"stat", "-c", "owner %u:%g mode %a links %h mtime %y", p},
	} {
		out, err := exec.Command(sysfiles.NeedProgram(t, args[0]), args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		b.Write(out)
	}
	return b.String()
}

// TestKeepsMetadata gives a program every attribute a system file can
// carry (owner, setuid and setgid bits, file capabilities, user.* and
// security.* extended attributes, an access ACL) in a directory with a
// default ACL, and checks that each form of sframe-gen that writes it in
// place keeps them all, and its hard links one file, while the program
// gets its SFrame section.
func TestKeepsMetadata(t *testing.T) {
	sysfiles.NeedRoot(t, "chown, capabilities, setuid bits, other users' ACLs")
	setcap, setfacl, setfattr := sysfiles.NeedProgram(t, "setcap"), sysfiles.NeedProgram(t, "setfacl"), sysfiles.NeedProgram(t, "setfattr")
	exe := filepath.Join(testdataDir(), "link/x86_64/pie.exe")
	forms := []struct {
		name string
		args func(dir, file string) []string
		link bool // a hard link outside what is named: written in place
	}{
		{"one FILE", func(dir, file string) []string { return []string{file} }, false},
		{"one FILE -p", func(dir, file string) []string { return []string{"-p", file} }, false},
		{"one FILE with a hard link", func(dir, file string) []string { return []string{file} }, true},
		{"tree", func(dir, file string) []string { return []string{"-q", dir} }, false},
		{"tree -p, a hard link outside", func(dir, file string) []string { return []string{"-q", "-p", dir} }, true},
		{"archive FILE", nil, false},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "tree")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			run := func(name string, args ...string) {
				t.Helper()
				if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
					t.Fatalf("%s %v: %v\n%s", name, args, err, out)
				}
			}
			// A default ACL: a new file in dir inherits an access ACL
			// the original does not have.
			run(setfacl, "-d", "-m", "u:4321:rwx", dir)
			file := filepath.Join(dir, "ping")
			args := []string(nil)
			if f.args == nil {
				file = filepath.Join(dir, "libx.a")
				obj := filepath.Join(top, "x.o")
				copyFile(t, filepath.Join(testdataDir(), "link/x86_64/demo.pic.o"), obj)
				run(sysfiles.NeedProgram(t, "ar"), "rcs", file, obj)
				args = []string{file}
			} else {
				copyFile(t, exe, file)
				args = f.args(dir, file)
			}
			run(setfacl, "-b", file) // only the ACL set below
			run(setfacl, "-m", "u:1234:r", file)
			run(setfattr, "-n", "user.origin", "-v", "kept", file)
			run(setfattr, "-n", "security.sframe-test", "-v", "label", file)
			if err := os.Chown(file, 1234, 5678); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, 0o6750|os.ModeSetuid|os.ModeSetgid); err != nil {
				t.Fatal(err)
			}
			run(setcap, "cap_net_raw+ep", file)
			old := time.Date(2003, 4, 5, 6, 7, 8, 0, time.UTC)
			os.Chtimes(file, old, old)
			if f.link {
				if err := os.Link(file, filepath.Join(top, "outside")); err != nil {
					t.Fatal(err)
				}
			}
			ino := inodeOf(t, file)
			before, data := metadata(t, file), readFile(t, file)
			if _, stderr, code := runCLI(args...); code != 0 {
				t.Fatalf("sframe-gen %v: exit %d\n%s", args, code, stderr)
			}
			after := metadata(t, file)
			if bytes.Equal(readFile(t, file), data) {
				t.Fatalf("the file was not patched")
			}
			keepsTime := strings.Contains(f.name, "-p")
			if !keepsTime {
				// Without -p the modification time is the write's.
				before, after = dropMtime(before), dropMtime(after)
			}
			if before != after {
				t.Errorf("attributes changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if f.link {
				if inodeOf(t, file) != ino || inodeOf(t, filepath.Join(top, "outside")) != ino {
					t.Errorf("the hard link outside is no longer the same file")
				}
			}
			leftTemps(t, dir)
		})
	}
}

// TestNoInheritedACL: a file without an ACL, in a directory whose default
// ACL grants another user access, stays without one (a copy made there
// would inherit it, and that user could read a file mode 0750 kept from
// them).
func TestNoInheritedACL(t *testing.T) {
	sysfiles.NeedRoot(t, "chown, capabilities, setuid bits, other users' ACLs")
	dir := t.TempDir()
	if out, err := exec.Command(sysfiles.NeedProgram(t, "setfacl"), "-d", "-m", "u:4321:rwx", dir).CombinedOutput(); err != nil {
		t.Fatalf("setfacl: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "prog")
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/pie.exe"), file)
	exec.Command("setfacl", "-b", file).Run()
	os.Chmod(file, 0o750)
	before := metadata(t, file)
	if strings.Contains(before, "user:4321") {
		t.Fatalf("setfacl -b left the inherited ACL:\n%s", before)
	}
	if _, stderr, code := runCLI(file); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if after := metadata(t, file); strings.Contains(after, "user:4321") || dropMtime(after) != dropMtime(before) {
		t.Errorf("attributes changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func dropMtime(s string) string {
	if i := strings.Index(s, " mtime "); i >= 0 {
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return s[:i] + s[i+j:]
		}
	}
	return s
}

func inodeOf(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// leftTemps fails t when dir holds a temporary file of sframe-gen.
func leftTemps(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".sframe-gen-") {
			t.Errorf("temporary file %s left", fmt.Sprint(e.Name()))
		}
	}
}

// TestImmutable: a file marked immutable (chattr +i), or in an immutable
// directory, is left as it is with a message that says so, in both forms.
func TestImmutable(t *testing.T) {
	sysfiles.NeedRoot(t, "chown, capabilities, setuid bits, other users' ACLs")
	chattr := sysfiles.NeedProgram(t, "chattr")
	for _, c := range []struct{ name, mark, want string }{
		{"file", "file", "is immutable (chattr +i)"},
		{"directory", "dir", "its directory"},
	} {
		for _, form := range [][]string{nil, {"-q", "-j", "1"}} {
			dir := filepath.Join(t.TempDir(), "d")
			os.Mkdir(dir, 0o755)
			file := filepath.Join(dir, "prog")
			copyFile(t, filepath.Join(testdataDir(), "link/x86_64/pie.exe"), file)
			marked := file
			if c.mark == "dir" {
				marked = dir
			}
			if out, err := exec.Command(chattr, "+i", marked).CombinedOutput(); err != nil {
				sysfiles.NeedInput(t, "chattr +i (a file system with the immutable flag, as root): %v %s", err, out)
			}
			before := readFile(t, file)
			_, stderr, code := runCLI(append(form, file)...)
			exec.Command(chattr, "-i", marked).Run()
			if code != exitFailure || !strings.Contains(stderr, c.want) {
				t.Errorf("%s %v: exit %d, stderr %q: want 1 and %q", c.name, form, code, stderr, c.want)
			}
			if !bytes.Equal(readFile(t, file), before) {
				t.Errorf("%s %v: the file changed", c.name, form)
			}
			leftTemps(t, dir)
		}
	}
}
