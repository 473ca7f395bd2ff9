package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadCommandsTakeSeveralFiles runs dump, verify and rows (text and
// JSON) on two files, as objdump and readelf take them: the output holds
// each file's own output, in order (dump and rows after a line naming the
// file), and a file that cannot be read fails the run without hiding the
// others. (stats takes several PATHs as a tree: TestStatsTree.)
func TestReadCommandsTakeSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.so"), filepath.Join(dir, "b.so")
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/lazy.so"), a)
	copyFile(t, filepath.Join(testdataDir(), "link/aarch64/gasmix.so"), b)
	if _, errs, code := runCLI("-q", a, b); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{{"dump"}, {"dump", "--json"}, {"verify"}, {"verify", "--json"}, {"rows"}, {"rows", "--json"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			outA, _, codeA := runCLI(append(args, a)...)
			outB, _, codeB := runCLI(append(args, b)...)
			both, errs, code := runCLI(append(args, a, b)...)
			if codeA != 0 || codeB != 0 || code != 0 {
				t.Fatalf("exit %d, %d alone, %d together: %s", codeA, codeB, code, errs)
			}
			switch {
			case args[0] == "dump" && len(args) == 1:
				outA, outB = "\n"+a+":\n"+outA, "\n"+b+":\n"+outB
			case args[0] == "rows" && len(args) == 1:
				outA, outB = a+":\n"+outA, b+":\n"+outB
			}
			if args[0] == "dump" && len(args) == 2 || args[0] == "rows" && len(args) == 2 {
				// JSON with a "file" member, as an archive's members.
				for _, name := range []string{a, b} {
					if !strings.Contains(both, `"file": "`+name+`"`) && !strings.Contains(both, `"file":"`+name+`"`) {
						t.Errorf("no JSON naming %s:\n%.400s", name, both)
					}
				}
				return
			}
			if both != outA+outB {
				t.Errorf("together:\n%.600s\nwant each alone, in order:\n%.600s", both, outA+outB)
			}
		})
	}
	missing := filepath.Join(dir, "missing.so")
	out, errs, code := runCLI("verify", a, missing)
	if code != exitUsage || !strings.Contains(errs, missing) || !strings.Contains(out, "a.so") {
		t.Errorf("verify a missing: exit %d, stdout %q, stderr %q; want a's report, the missing file named, exit 2", code, out, errs)
	}
	if _, errs, code := runCLI("dump"); code != exitUsage || !strings.Contains(errs, "expected a FILE") {
		t.Errorf("dump without FILE: exit %d, %q", code, errs)
	}
}

// TestBatchNamedNonELF: a file that is not ELF named on the command line
// among others is reported and fails the run, as it does alone; found by
// walking a directory, it is left alone without a word.
func TestBatchNamedNonELF(t *testing.T) {
	dir := t.TempDir()
	lib, text := filepath.Join(dir, "lib.so"), filepath.Join(dir, "README")
	copyFile(t, filepath.Join(testdataDir(), "link/x86_64/lazy.so"), lib)
	if err := os.WriteFile(text, []byte("text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, alone, codeAlone := runCLI(text)
	_, errs, code := runCLI(lib, text)
	if codeAlone != exitFailure || code != exitFailure || !strings.Contains(errs, "sframe-gen: "+text+": not an ELF file\n") || !strings.Contains(errs, "1 patched") || !strings.Contains(errs, "1 failed") {
		t.Errorf("alone: exit %d %q; in a list: exit %d %q; want it reported and failed both times", codeAlone, alone, code, errs)
	}
	if _, errs, code := runCLI(dir); code != exitOK || strings.Contains(errs, "README") || !strings.Contains(errs, "1 skipped") {
		t.Errorf("walked: exit %d %q; want it skipped silently", code, errs)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, errs, code := runCLI("--output-dir", out, lib, text); code != exitFailure || !strings.Contains(errs, text+": not an ELF file (copied as it is)") {
		t.Errorf("--output-dir: exit %d %q", code, errs)
	}
}

// TestSmallNewUserThings: stack on an empty file says so as the other
// commands do; help stack has a Flags: heading as every command's help;
// the man page's -o example writes a whole program under a program's name;
// the README's synopsis of rows has --json optional, and rows runs without it.
func TestSmallNewUserThings(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, dumpErr, _ := runCLI("dump", empty)
	_, stackErr, code := runCLI("stack", empty)
	if code != exitFailure || stackErr != dumpErr || !strings.Contains(stackErr, "empty file") {
		t.Errorf("stack on an empty file: exit %d %q; dump says %q", code, stackErr, dumpErr)
	}
	for _, cmd := range []string{"stack", "dump", "verify", "stats", "rows"} {
		if out, _, _ := runCLI("help", cmd); !strings.Contains(out, "\n\nFlags:\n") {
			t.Errorf("help %s has no Flags: heading:\n%s", cmd, out)
		}
	}

	man, err := os.ReadFile(filepath.Join("..", "..", "docs", "sframe-gen.1"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^sframe-gen \\-o (\S+) (\S+) +#.*$`).FindStringSubmatch(string(man))
	if m == nil {
		t.Fatal("the man page has no `sframe-gen -o OUT IN` example")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, m[2]), filepath.Join(dir, m[1])
	copyFile(t, filepath.Join(testdataDir(), "sample", "hello-x86_64"), in)
	if _, errs, code := runCLI("-o", out, in); code != 0 {
		t.Fatalf("the man page's %q: exit %d %s", m[0], code, errs)
	}
	f, err := elf.Open(out)
	if err != nil || f.Type != elf.ET_DYN && f.Type != elf.ET_EXEC || f.Section(".sframe") == nil || strings.HasSuffix(m[1], ".sframe") {
		t.Errorf("the man page's %q: %s is not a whole program with SFrame under a program's name (%v)", m[0], m[1], err)
	}

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "sframe-gen rows [--json] FILE...") {
		t.Error("README: the synopsis of rows does not read `rows [--json] FILE...`")
	}
	if _, errs, code := runCLI("rows", out); code != 0 {
		t.Errorf("rows without --json: exit %d %s", code, errs)
	}
}

// TestReadmeBatchExamples runs the README's two batch examples literally
// (bash, the built sframe-gen first in $PATH) in a directory holding a
// debian/tmp/ and a prebuilt/ tree: one JSON line per file, the files
// patched in place; a patched copy of prebuilt/ under out/, prebuilt/ as
// it was.
func TestReadmeBatchExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "\nsframe-gen -j 8 --report sframe.jsonl debian/tmp/")
	if i < 0 {
		t.Fatal("README.md: no batch example")
	}
	block, _, _ := strings.Cut(string(readme)[i+1:], "```")
	bindir := filepath.Dir(buildCommand(t))
	dir := t.TempDir()
	libs := []string{"link/x86_64/lazy.so", "link/aarch64/gasmix.so", "link/s390x/direct.so"}
	for _, tree := range []string{"debian/tmp/usr/lib", "prebuilt/lib"} {
		if err := os.MkdirAll(filepath.Join(dir, tree), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, lib := range libs {
			copyFile(t, filepath.Join(testdataDir(), lib), filepath.Join(dir, tree, strings.ReplaceAll(lib, "/", "-")))
		}
	}
	before := readFile(t, filepath.Join(dir, "prebuilt/lib", "link-x86_64-lazy.so"))
	sh := exec.Command("bash", "-e", "-c", block)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "PATH="+bindir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the README's batch examples: %v\n%s", err, out)
	}
	report := readFile(t, filepath.Join(dir, "sframe.jsonl"))
	if n := bytes.Count(report, []byte("\n")); n != len(libs) || bytes.Count(report, []byte(`"status":"patched"`)) != len(libs) {
		t.Errorf("sframe.jsonl: want %d lines, each patched:\n%s", len(libs), report)
	}
	for _, lib := range libs {
		name := strings.ReplaceAll(lib, "/", "-")
		for _, p := range []string{filepath.Join("debian/tmp/usr/lib", name), filepath.Join("out/lib", name)} {
			if !hasSFrameSection(t, filepath.Join(dir, p)) {
				t.Errorf("%s has no .sframe", p)
			}
		}
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, "prebuilt/lib", "link-x86_64-lazy.so")), before) {
		t.Error("--output-dir changed its input")
	}
}
