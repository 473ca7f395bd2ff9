package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestReadCommandsOnArchives: dump, verify, stats and rows read a static
// archive member by member, naming each ARCHIVE(MEMBER) as generate does,
// and print for each what they print for the object alone; members that
// are not ELF, or for an architecture without SFrame, are left out.
func TestReadCommandsOnArchives(t *testing.T) {
	ar := sysfiles.NeedProgram(t, "ar")
	td := testdataDir()
	dir := t.TempDir()
	members := []string{"demo.o", "drap_with_a_long_member_name.o"}
	sources := []string{"link/x86_64/demo.pic.o", "cc/x86_64/O2/drap.o"}
	var paths []string
	for i, m := range members {
		p := filepath.Join(dir, m)
		copyFile(t, filepath.Join(td, sources[i]), p)
		paths = append(paths, p)
	}
	readme := filepath.Join(dir, "README")
	i386 := filepath.Join(dir, "i386.o")
	os.WriteFile(readme, []byte("text\n"), 0o644)
	os.WriteFile(i386, elf32Object(), 0o644)
	lib := filepath.Join(dir, "libdemo.a")
	if msg, err := exec.Command(ar, append([]string{"rcsD", lib}, append(append([]string{}, paths...), readme, i386)...)...).CombinedOutput(); err != nil {
		t.Fatalf("ar: %v\n%s", err, msg)
	}
	plain := filepath.Join(dir, "plain.a")
	copyFile(t, lib, plain)

	run := func(want int, args ...string) string {
		t.Helper()
		stdout, stderr, code := runCLI(args...)
		if code != want {
			t.Fatalf("sframe-gen %q: exit %d, want %d\n%s%s", args, code, want, stdout, stderr)
		}
		return stdout
	}
	// Before generate: nothing to dump or verify; stats is a dry run.
	if _, stderr, code := runCLI("dump", plain); code != exitFailure || stderr != "sframe-gen: "+plain+": no member has a .sframe section\n" {
		t.Errorf("dump of an archive without SFrame: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runCLI("verify", plain); code != exitUsage || !strings.HasPrefix(stderr, "sframe-gen: "+plain+"(demo.o): no .sframe section\n") {
		t.Errorf("verify of an archive without SFrame: exit %d, %q", code, stderr)
	}
	if out := run(exitOK, "stats", plain); !strings.HasPrefix(out, plain+"(demo.o): dry run") {
		t.Errorf("stats of an archive without SFrame:\n%s", out)
	}

	run(exitOK, lib)
	for _, p := range paths {
		run(exitOK, p) // each object alone, as the archive's members were patched
	}
	var wantDump, wantRows, wantStats strings.Builder
	for i, m := range members {
		name := lib + "(" + m + ")"
		wantDump.WriteString("\n" + name + ":\n" + run(exitOK, "dump", paths[i]))
		wantRows.WriteString(name + ":\n" + run(exitOK, "rows", paths[i]))
		wantStats.WriteString(strings.Replace(run(exitOK, "stats", paths[i]), paths[i], name, 1))
	}
	if got := run(exitOK, "dump", lib); got != wantDump.String() {
		t.Errorf("dump of the archive:\n%s\nwant\n%s", got, wantDump.String())
	}
	if got := run(exitOK, "rows", lib); got != wantRows.String() {
		t.Errorf("rows of the archive:\n%s\nwant\n%s", got, wantRows.String())
	}
	if got := run(exitOK, "stats", lib); got != wantStats.String() {
		t.Errorf("stats of the archive:\n%s\nwant\n%s", got, wantStats.String())
	}
	out := run(exitOK, "verify", lib)
	for i, m := range members {
		summary := run(exitOK, "verify", paths[i])
		if want := strings.Replace(summary, paths[i], lib+"("+m+")", 1); !strings.Contains(out, want) {
			t.Errorf("verify of the archive:\n%s\nlacks\n%s", out, want)
		}
	}

	// JSON: one object per member (per member and FDE for rows), each
	// naming its member.
	files := func(cmd string) []string {
		t.Helper()
		dec := json.NewDecoder(strings.NewReader(run(exitOK, cmd, "--json", lib)))
		var names []string
		for dec.More() {
			var v struct{ File string }
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%s --json: %v", cmd, err)
			}
			if len(names) == 0 || names[len(names)-1] != v.File {
				names = append(names, v.File)
			}
		}
		return names
	}
	want := lib + "(" + members[0] + ") " + lib + "(" + members[1] + ")"
	for _, cmd := range []string{"dump", "verify", "stats", "rows"} {
		if got := strings.Join(files(cmd), " "); got != want {
			t.Errorf("%s --json names %q, want %q", cmd, got, want)
		}
	}
	// A single object's JSON is as before: no "file" in dump and rows.
	for _, cmd := range []string{"dump", "rows"} {
		if out := run(exitOK, cmd, "--json", paths[0]); bytes.Contains([]byte(out), []byte(`"file"`)) {
			t.Errorf("%s --json of an object names a file", cmd)
		}
	}
}
