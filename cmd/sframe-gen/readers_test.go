package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestReadersTable measures every cell of the table "Measured on this
// machine" of docs/readers.md: objdump, readelf and ld of binutils 2.40
// (Debian's), 2.44 (gnu-old-ref.sh) and the reference, on an object and a
// shared library given each form of SFrame by sframe-gen. A cell says
// "yes" or "no: " and the tool's message, which its output must contain.
func TestReadersTable(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs three binutils on every form of SFrame (runs in make test-long)")
	}
	rows := readersTableRows(t)
	bin := buildCommand(t)
	subjects := readersSubjects(t, bin)
	for _, row := range rows {
		t.Run(row.binutils+"/"+row.tool, func(t *testing.T) {
			for i, form := range readersForms {
				read, msg := readerReads(t, row, subjects[form.name])
				want := row.cells[i]
				switch {
				case want == "yes" && !read:
					t.Errorf("%s: does not read it: %s", form.name, msg)
				case want != "yes" && read:
					t.Errorf("%s: reads it; the table says %q", form.name, want)
				case want != "yes" && !strings.Contains(msg, cellMessage(row.cells, i)):
					t.Errorf("%s: says %q; the table says %q", form.name, msg, cellMessage(row.cells, i))
				}
			}
		})
	}
}

// readersForms are the table's columns: the flags of each form.
var readersForms = []struct{ name, flags string }{
	{"version 3", ""},
	{"version 3, shared blocks", "--share-fres"},
	{"version 2, 2.45 layout", "--sframe-version=2 --v2-layout=2.45"},
	{"version 2, 2.44 layout", "--sframe-version=2 --v2-layout=2.44"},
}

// readersRow is one row of the table.
type readersRow struct {
	binutils, tool string
	cells          []string
}

// readersTableRows reads the table of docs/readers.md.
func readersTableRows(t *testing.T) []readersRow {
	data, err := os.ReadFile("../../docs/readers.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(data), "\n## Measured on this machine\n")
	var rows []readersRow
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 2+len(readersForms) || strings.HasPrefix(cells[0], "---") || strings.TrimSpace(cells[0]) == "binutils" {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, readersRow{binutils: cells[0], tool: cells[1], cells: cells[2:]})
	}
	if len(rows) != 9 {
		t.Fatalf("docs/readers.md: %d rows in the measured table, want 9 (3 releases x objdump, readelf, ld)", len(rows))
	}
	return rows
}

// cellMessage is the message of cell i: the text in backquotes, or the
// previous cell's for "no: the same".
func cellMessage(cells []string, i int) string {
	for ; i >= 0; i-- {
		if _, msg, ok := strings.Cut(cells[i], "`"); ok {
			msg, _, _ = strings.Cut(msg, "`")
			return msg
		}
	}
	return "?"
}

// readersSubject is one form of SFrame in an object and in a shared library.
type readersSubject struct{ object, shared string }

// readersSubjects compiles c.o and c.so (no SFrame of their own) and
// writes each form of SFrame into copies of them.
func readersSubjects(t *testing.T, bin string) map[string]readersSubject {
	dir := t.TempDir()
	src := filepath.Join(dir, "c.c")
	code := "int g(int);\nint a(int x) { return g(x) + 1; }\nint b(int x) { return g(x) + 2; }\nint c(int x) { return g(x) * 3 + g(x + 1); }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	gcc := sysfiles.NeedProgram(t, "gcc")
	obj, so := filepath.Join(dir, "c.o"), filepath.Join(dir, "c.so")
	runOK(t, gcc, "-O2", "-fPIC", "-c", "-o", obj, src)
	runOK(t, gcc, "-O2", "-fPIC", "-shared", "-o", so, src)
	subjects := map[string]readersSubject{}
	for i, form := range readersForms {
		sub := filepath.Join(dir, string(rune('a'+i)))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		s := readersSubject{object: filepath.Join(sub, "c.o"), shared: filepath.Join(sub, "c.so")}
		for _, pair := range [][2]string{{obj, s.object}, {so, s.shared}} {
			args := append(strings.Fields(form.flags), "-o", pair[1], pair[0])
			runOK(t, bin, args...)
		}
		subjects[form.name] = s
	}
	return subjects
}

// readerReads runs the row's tool on the subject: objdump and readelf on
// both files (they read both or neither), ld by linking the object into a
// shared library. It reports whether the tool read it without a message,
// and what it printed.
func readerReads(t *testing.T, row readersRow, s readersSubject) (bool, string) {
	release, _, _ := strings.Cut(row.binutils, " ")
	var dir string
	switch release {
	case "2.40":
		dir = hostBinutils(t, release)
	case "2.44":
		dir = filepath.Dir(sysfiles.GNUOld.Tool(t, "x86_64", "objdump"))
	case "2.46+":
		dir = filepath.Dir(sysfiles.GNURef.Tool(t, "x86_64", "objdump"))
	default:
		t.Fatalf("binutils %q: not one of 2.40, 2.44, 2.46+", row.binutils)
	}
	tool := func(name string) string {
		if release == "2.40" {
			return sysfiles.NeedProgram(t, filepath.Join(dir, name))
		}
		return filepath.Join(dir, "x86_64-"+name)
	}
	switch row.tool {
	case "objdump --sframe", "readelf --sframe":
		name := strings.Fields(row.tool)[0]
		var msgs []string
		read := true
		for _, f := range []string{s.object, s.shared} {
			out, err := exec.Command(tool(name), "--sframe", f).CombinedOutput()
			ok := err == nil && strings.Contains(string(out), "SFrame section") && !strings.Contains(strings.ToLower(string(out)), "error")
			read = read && ok
			if !ok {
				msgs = append(msgs, strings.TrimSpace(string(out)))
			}
		}
		return read, strings.Join(msgs, "\n")
	case "ld":
		// In the object's directory, so that ld names it c.o, as the table does.
		args := []string{"-shared", "-o", filepath.Join(t.TempDir(), "l.so"), filepath.Base(s.object)}
		if release != "2.40" {
			args = append([]string{"-B", filepath.Join(dir, "..", "gcc-x86_64")}, args...)
		}
		cmd := exec.Command(sysfiles.NeedProgram(t, "gcc"), args...)
		cmd.Dir = filepath.Dir(s.object)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return len(out) == 0, strings.TrimSpace(string(out))
	}
	t.Fatalf("tool %q: not objdump --sframe, readelf --sframe or ld", row.tool)
	return false, ""
}
