package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit/stats"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// statsTreeTree makes a tree of ELF files for the tree form of stats: the
// files of testdata/link (every ABI, linked files and objects, with and
// without .sframe), a static archive with two objects, a file without
// CFI, a file that is not ELF and a 32-bit object (both skipped; the
// object's bytes count as installed).
func statsTreeTree(t *testing.T) string {
	t.Helper()
	ar := sysfiles.NeedProgram(t, "ar")
	td := testdataDir()
	dir := t.TempDir()
	for _, f := range libraryFiles(t) {
		if !strings.HasPrefix(f, filepath.Join(td, "link")) {
			continue // the system's libstdc++ (make test-long) is tested elsewhere
		}
		rel, _ := filepath.Rel(filepath.Join(td, "link"), f)
		os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
		copyFile(t, f, filepath.Join(dir, rel))
	}
	objs := []string{filepath.Join(td, "link/x86_64/demo.pic.o"), filepath.Join(td, "cc/x86_64/O2/drap.o")}
	if msg, err := exec.Command(ar, append([]string{"rcsD", filepath.Join(dir, "libdemo.a")}, objs...)...).CombinedOutput(); err != nil {
		t.Fatalf("ar: %v\n%s", err, msg)
	}
	copyFile(t, filepath.Join(td, "gas/x86_64/nocfi.o"), filepath.Join(dir, "nocfi.o"))
	os.WriteFile(filepath.Join(dir, "README"), []byte("text\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "i386.o"), elf32Object(), 0o644)
	return dir
}

// readStatsStream decodes the objects stats --json prints in the tree
// form: one per file, then {"total": ...}.
func readStatsStream(t *testing.T, out string) ([]stats.Stats, stats.Total) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var files []stats.Stats
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("stats --json: %v\n%s", err, out)
		}
		var total struct {
			Total *stats.Total `json:"total"`
		}
		if err := json.Unmarshal(raw, &total); err == nil && total.Total != nil {
			if dec.More() {
				t.Fatalf("stats --json: objects after the total")
			}
			return files, *total.Total
		}
		var st stats.Stats
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		files = append(files, st)
	}
	t.Fatalf("stats --json: no total\n%s", out)
	return nil, stats.Total{}
}

// TestStatsTree: stats over a tree prints an object per file and a total
// that is their sum, by kind too; each file's breakdown adds up to its
// section's size, and its size is what --raw writes, for every option set;
// the text form says the same total; -j does not change the output.
func TestStatsTree(t *testing.T) {
	dir := statsTreeTree(t)
	sets := [][]string{
		nil,
		{"--gas-compat"},
		{"--no-share-fres"},
		{"--sframe-version", "2"},
	}
	raw := filepath.Join(t.TempDir(), "raw")
	for _, set := range sets {
		name := strings.Join(append([]string{"stats --dry-run"}, set...), " ")
		args := append(append([]string{"stats", "--json", "--dry-run"}, set...), dir)
		out, stderr, code := runCLI(args...)
		if code != exitOK || stderr != "" {
			t.Fatalf("%s: exit %d\n%s", name, code, stderr)
		}
		files, total := readStatsStream(t, out)
		if one, _, _ := runCLI(append(args, "-j", "1")...); one != out {
			t.Errorf("%s: -j 1 prints otherwise", name)
		}

		var sum stats.Counts
		byKind, byABI := map[string]*stats.Counts{}, map[string]*stats.Counts{}
		members := 0
		for i := range files {
			st := &files[i]
			sum.Add(st)
			for by, key := range map[*map[string]*stats.Counts]string{&byKind: st.Kind, &byABI: st.ABI} {
				if (*by)[key] == nil {
					(*by)[key] = &stats.Counts{}
				}
				(*by)[key].Add(st)
			}
			if got := st.Breakdown.Sum(); got != st.SectionBytes {
				t.Errorf("%s: %s: breakdown adds up to %d, section %d bytes (%+v)", name, st.File, got, st.SectionBytes, st.Breakdown)
			}
			if !st.DryRun {
				t.Errorf("%s: %s: not a dry run", name, st.File)
			}
			if st.Kind == "archive-member" {
				members++
				continue
			}
			os.Remove(raw)
			if _, rawErr, rawCode := runCLI(append(append([]string{"--raw", "-o", raw}, set...), st.File)...); rawCode != exitOK {
				if !strings.Contains(rawErr, "no function has an SFrame representation") {
					t.Errorf("%s: %s: --raw failed (%s); stats did not", name, st.File, strings.TrimSpace(rawErr))
				}
				continue
			}
			if w, err := os.Stat(raw); err != nil || w.Size() != int64(st.SectionBytes) {
				t.Errorf("%s: %s: stats says %d bytes, --raw wrote %v (%v)", name, st.File, st.SectionBytes, w, err)
			}
		}
		if !reflect.DeepEqual(sum, total.Counts) {
			t.Errorf("%s: total\n%+v\nis not the sum of the files\n%+v", name, total.Counts, sum)
		}
		if !reflect.DeepEqual(byKind, total.ByKind) || !reflect.DeepEqual(byABI, total.ByABI) || len(byABI) != 3 {
			t.Errorf("%s: totals by kind or ABI differ from the files' sums", name)
		}
		if total.Counts.Files != len(files) || members != 2 || total.FilesSkipped < 3 || total.FilesWithoutCFI != 1 || total.FilesFailed != 0 || len(files) < 60 {
			t.Errorf("%s: %d files (%d members), total %+v", name, len(files), members, total)
		}
		var installed int64
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if data, err := os.ReadFile(p); err == nil && d.Type().IsRegular() &&
				(bytes.HasPrefix(data, []byte("\x7fELF")) || bytes.HasPrefix(data, []byte("!<arch>\n"))) {
				installed += int64(len(data))
			}
			return nil
		})
		if total.InstalledBytes != installed {
			t.Errorf("%s: installed_bytes %d, the tree's ELF files and archives %d", name, total.InstalledBytes, installed)
		}

		text, _, code := runCLI(append(append([]string{"stats", "--dry-run"}, set...), dir)...)
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if code != exitOK || len(lines) < len(files)+5 || !strings.HasPrefix(lines[len(files)], "total: ") {
			t.Fatalf("%s: text form, exit %d:\n%s", name, code, text)
		}
		for i, st := range files {
			if !strings.HasPrefix(lines[i], st.File+": dry run ") {
				t.Errorf("%s: text line %d is %q, JSON's file %s", name, i, lines[i], st.File)
			}
		}
	}
}

// TestStatsTreeErrors: a file that cannot be read fails the run (exit 1)
// with its one-line error, after the others were counted; so does a file
// that is not ELF named on the command line (found in a directory, it is
// skipped); a single FILE keeps the one-file form.
func TestStatsTreeErrors(t *testing.T) {
	dir := t.TempDir()
	td := testdataDir()
	copyFile(t, filepath.Join(td, "link/x86_64/demo.pic.o"), filepath.Join(dir, "a.o"))
	cut, _ := os.ReadFile(filepath.Join(td, "link/x86_64/demo.pic.o"))
	os.WriteFile(filepath.Join(dir, "b.o"), cut[:100], 0o644)
	out, stderr, code := runCLI("stats", "--json", dir)
	if code != exitFailure || !strings.HasPrefix(stderr, "sframe-gen: "+filepath.Join(dir, "b.o")+": ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	files, total := readStatsStream(t, out)
	if len(files) != 1 || total.Counts.Files != 1 || total.FilesFailed != 1 {
		t.Errorf("files %d, total %+v", len(files), total)
	}
	readme := filepath.Join(dir, "README")
	os.WriteFile(readme, []byte("text\n"), 0o644)
	_, stderr, code = runCLI("stats", filepath.Join(dir, "a.o"), readme)
	if code != exitFailure || stderr != "sframe-gen: "+readme+": not an ELF file\n" {
		t.Errorf("a file that is not ELF named among others: exit %d, %q", code, stderr)
	}
	one, _, code := runCLI("stats", "--json", filepath.Join(dir, "a.o"))
	var st stats.Stats
	if code != exitOK || json.Unmarshal([]byte(one), &st) != nil || st.File != filepath.Join(dir, "a.o") || strings.Contains(one, `"total"`) {
		t.Errorf("one file: exit %d\n%s", code, one)
	}
	if st.Kind != "object" || st.FileBytes != int64(len(cut)) {
		t.Errorf("one file: kind %q, %d bytes", st.Kind, st.FileBytes)
	}
}

// TestStatsDocExample: the tree form's example in docs/stats.md is what
// the command prints on testdata/link, line for line ("..." standing for
// lines left out).
func TestStatsDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testdataDir(), "..", "docs", "stats.md"))
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "$ sframe-gen stats --dry-run testdata/link\n"
	_, block, ok := strings.Cut(string(doc), "```\n"+cmd)
	block, _, _ = strings.Cut(block, "```\n")
	if !ok || block == "" {
		t.Fatalf("docs/stats.md has no example of %q", cmd)
	}
	out, stderr, code := runCLI("stats", "--dry-run", filepath.Join(testdataDir(), "link"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out = strings.ReplaceAll(out, filepath.Join(testdataDir(), "link")+"/", "testdata/link/")
	lines := strings.Split(out, "\n")
	at := 0
	for _, want := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		if want == "..." {
			continue
		}
		for at < len(lines) && lines[at] != want {
			at++
		}
		if at == len(lines) {
			t.Errorf("docs/stats.md's line %q is not in the output (in this order):\n%s", want, out)
			return
		}
	}
}

// TestCostTable runs docs/cost.md's recipes on testdata/link (the default
// and --merge-fdes): the tables testdata/costtable makes of stats
// --json's output show its total.
func TestCostTable(t *testing.T) {
	goTool := sysfiles.NeedProgram(t, "go")
	for _, opts := range [][]string{nil, {"--merge-fdes"}} {
		args := append(append([]string{"stats", "--json", "--dry-run"}, opts...), filepath.Join(testdataDir(), "link"))
		out, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		_, total := readStatsStream(t, out)
		cmd := exec.Command(goTool, "run", "./costtable")
		cmd.Dir = testdataDir()
		cmd.Stdin = strings.NewReader(out)
		table, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("costtable: %v\n%s", err, table)
		}
		eh := float64(total.EHFrameBytes + total.EHFrameHdrBytes)
		want := fmt.Sprintf("| all | %d | %.1f MB | %.1f MB (%.1f%%) | %.1f MB: %.3f, %.1f%% | %.1f MB: %.3f, %.1f%% |\n",
			total.Files, float64(total.InstalledBytes)/1e6, eh/1e6, 100*eh/float64(total.InstalledBytes),
			float64(total.UnsharedBytes)/1e6, float64(total.UnsharedBytes)/eh, 100*float64(total.UnsharedBytes)/float64(total.InstalledBytes),
			float64(total.SectionBytes)/1e6, float64(total.SectionBytes)/eh, 100*float64(total.SectionBytes)/float64(total.InstalledBytes))
		if !strings.Contains(string(table), want) || strings.Count(string(table), "\n| ") < 2+1+len(total.ByKind)+len(total.ByABI)+10 {
			t.Errorf("%v: costtable's output has not the row\n%s\n%s", opts, want, table)
		}
	}
}
