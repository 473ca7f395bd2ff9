package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// docBlock returns the fenced block of the document name (relative to the
// tree's root) whose first line is first, failing t when there is none.
func docBlock(t *testing.T, name, first string) string {
	t.Helper()
	b, ok := fencedBlock(readDoc(t, filepath.Join(testdataDir(), ".."), name), first)
	if !ok {
		t.Fatalf("%s has no block starting with %q", name, first)
	}
	return b
}

// docSynopses are synopsis blocks of the docs, by document and first line,
// and the help that must have the same usage line.
var docSynopses = []struct{ doc, first, help string }{
	{"docs/batch.md", "sframe-gen [flags] PATH...", "--help"},
	{"docs/dump.md", "sframe-gen dump [--json] FILE...      (several FILEs: each after a line naming it, as objdump does)", "dump"},
	{"docs/rows.md", "sframe-gen rows [--json] [--eh-frame | --debug-frame] FILE...   (several FILEs: each after a line naming it)", "rows"},
	{"docs/stack.md", "sframe-gen stack [--json] [--sysroot DIR] CORE", "stack"},
}

// TestDocSynopses checks that each synopsis block of docSynopses (its
// first line up to two spaces: the command) is a usage line of the
// command's help (sframe-gen help COMMAND, or --help), spaces around |
// aside.
func TestDocSynopses(t *testing.T) {
	usage := regexp.MustCompile(`(?m)^(?:Usage:|  or:|      ) +(sframe-gen .*)$`)
	bar := regexp.MustCompile(`\s*\|\s*`)
	for _, s := range docSynopses {
		first, _, _ := strings.Cut(docBlock(t, s.doc, s.first), "\n")
		synopsis, _, _ := strings.Cut(first, "  ")
		synopsis = bar.ReplaceAllString(synopsis, "|")
		args := []string{"help", s.help}
		if s.help == "--help" {
			args = []string{"--help"}
		}
		out, _, _ := runCLI(args...)
		var lines []string
		for _, m := range usage.FindAllStringSubmatch(out, -1) {
			lines = append(lines, bar.ReplaceAllString(strings.TrimSpace(m[1]), "|"))
		}
		if !slices.Contains(lines, synopsis) {
			t.Errorf("%s: %q is none of the usage lines of sframe-gen %s: %q", s.doc, synopsis, strings.Join(args, " "), lines)
		}
	}
}

// TestStatsDocSamples checks docs/stats.md's samples against the command:
// the text is what sframe-gen stats prints on
// testdata/gas/x86_64/warnings.o line for line ("..." standing for lines
// left out), the JSON what stats --json prints on
// testdata/link/x86_64/lazy.gs.so, value for value.
func TestStatsDocSamples(t *testing.T) {
	const textFile, jsonFile = "gas/x86_64/warnings.o", "link/x86_64/lazy.gs.so"
	text := docBlock(t, "docs/stats.md", "testdata/"+textFile+": dry run: the .sframe section generating would write (SFRAME_ABI_AMD64_ENDIAN_LITTLE, version 3)")
	out, errs, code := runCLI("stats", filepath.Join(testdataDir(), textFile))
	if code != exitOK {
		t.Fatalf("stats %s: exit %d: %s", textFile, code, errs)
	}
	out = strings.ReplaceAll(out, filepath.Join(testdataDir(), textFile), "testdata/"+textFile)
	if err := linesInOrder(text, out); err != "" {
		t.Errorf("docs/stats.md's text sample: %s; stats prints:\n%s", err, out)
	}

	sample := docBlock(t, "docs/stats.md", "{\n  \"file\": \"testdata/"+jsonFile+"\",")
	out, errs, code = runCLI("stats", "--json", filepath.Join(testdataDir(), jsonFile))
	if code != exitOK {
		t.Fatalf("stats --json %s: exit %d: %s", jsonFile, code, errs)
	}
	out = strings.ReplaceAll(out, filepath.Join(testdataDir(), jsonFile), "testdata/"+jsonFile)
	var want, got any
	if err := json.Unmarshal([]byte(sample), &want); err != nil {
		t.Fatalf("docs/stats.md's JSON sample: %v", err)
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("docs/stats.md's JSON sample is not what stats --json prints:\n%s", out)
	}
}

// linesInOrder says how the lines of sample differ from out's: each must
// be out's next line, or any later one after a line "...".
func linesInOrder(sample, out string) string {
	lines := strings.Split(out, "\n")
	at, skip := 0, false
	for _, want := range strings.Split(strings.TrimSuffix(sample, "\n"), "\n") {
		if strings.TrimSpace(want) == "..." {
			skip = true
			continue
		}
		for skip && at < len(lines) && lines[at] != want {
			at++
		}
		if at == len(lines) || lines[at] != want {
			return "line " + strconvQuote(want) + " is not the next line of the output"
		}
		at, skip = at+1, false
	}
	return ""
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestDocJSONKeys checks the JSON samples of the docs that are not a run's
// output against the command's: every key of docs/rows.md's sample is in
// rows --json's output on testdata/link/x86_64/lazy.so and the other way
// round; every key of docs/dump.md's schema (with its RULE) is in dump
// --json's output on the gasmix.gs.so of each ABI and the other way round.
func TestDocJSONKeys(t *testing.T) {
	rows := docBlock(t, "docs/rows.md", `{"start":4096,"end":4160,"rows":[`)
	var sample any
	if err := json.Unmarshal([]byte(rows), &sample); err != nil {
		t.Fatalf("docs/rows.md's JSON sample: %v", err)
	}
	out, errs, code := runCLI("rows", "--json", filepath.Join(testdataDir(), "link", "x86_64", "lazy.so"))
	if code != exitOK {
		t.Fatalf("rows --json: exit %d: %s", code, errs)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("rows --json: %v: %s", err, line)
		}
		jsonKeys(v, got)
	}
	// "expr" (a CFA by DWARF expression) is in the text after the sample.
	sameKeys(t, "docs/rows.md's sample", jsonKeys(sample, map[string]bool{"expr": true}), got)

	doc := readDoc(t, filepath.Join(testdataDir(), ".."), "docs/dump.md")
	schema := docBlock(t, "docs/dump.md", "{")
	_, rule, _ := strings.Cut(doc, "A RULE is `")
	rule, _, _ = strings.Cut(rule, "`")
	want := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(\w+)":`).FindAllStringSubmatch(schema+rule, -1) {
		want[m[1]] = true
	}
	got = map[string]bool{}
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		out, errs, code := runCLI("dump", "--json", filepath.Join(testdataDir(), "link", arch, "gasmix.gs.so"))
		if code != exitOK {
			t.Fatalf("dump --json: exit %d: %s", code, errs)
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("dump --json: %v", err)
		}
		jsonKeys(v, got)
	}
	sameKeys(t, "docs/dump.md's schema", want, got)
}

// jsonKeys adds the keys of every object in v to keys, but numbers (the
// DWARF registers of rows' "regs").
func jsonKeys(v any, keys map[string]bool) map[string]bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if strings.Trim(k, "0123456789") != "" {
				keys[k] = true
			}
			jsonKeys(e, keys)
		}
	case []any:
		for _, e := range v {
			jsonKeys(e, keys)
		}
	}
	return keys
}

// sameKeys fails t when the documented keys and those of the output
// differ.
func sameKeys(t *testing.T, what string, doc, out map[string]bool) {
	t.Helper()
	var missing, extra []string
	for k := range doc {
		if !out[k] {
			missing = append(missing, k)
		}
	}
	for k := range out {
		if !doc[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 {
		t.Errorf("%s: keys not in the output %q, keys of the output it does not have %q", what, missing, extra)
	}
}

// TestBatchDocSamples runs the batch form with --report on a tree like
// docs/batch.md's (a library with a hard link, a symbolic link to it, a
// truncated ELF file): each report line of the sample has the keys of the
// line of the same status, and the summary line the sample's form (its
// numbers aside).
func TestBatchDocSamples(t *testing.T) {
	report := docBlock(t, "docs/batch.md", `{"file":"lib/libfoo.so.1.2","status":"patched","kind":"shared-library","arch":"x86_64","bytes":15944,"fdes":11,"links":["lib/libfoo-again.so"]}`)
	summary := docBlock(t, "docs/batch.md", "sframe-gen: 31 files: 18 patched, 1 up to date, 1 without CFI, 10 skipped, 1 failed; 144 functions covered")
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(testdataDir(), "link", "x86_64", "lazy.so")
	copyFile(t, so, filepath.Join(lib, "libfoo.so.1.2"))
	data := readFile(t, so)
	if err := os.WriteFile(filepath.Join(lib, "broken.so"), data[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(lib, "libfoo.so.1.2"), filepath.Join(lib, "libfoo-again.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("libfoo.so.1.2", filepath.Join(lib, "libfoo.so")); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI("--report", "-", lib)
	if code != exitFailure {
		t.Errorf("exit %d, want %d (a file failed): %s", code, exitFailure, errs)
	}
	byStatus := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("--report: %v: %s", err, line)
		}
		byStatus[v["status"].(string)] = jsonKeys(v, map[string]bool{})
	}
	for _, line := range strings.Split(strings.TrimSpace(report), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("docs/batch.md's report sample: %v: %s", err, line)
		}
		sameKeys(t, "docs/batch.md's "+v["status"].(string)+" line", jsonKeys(v, map[string]bool{}), byStatus[v["status"].(string)])
	}
	form := regexp.MustCompile(`\d+`).ReplaceAllString(regexp.QuoteMeta(strings.TrimSpace(summary)), `\d+`)
	if !regexp.MustCompile(`(?m)^` + form + `$`).MatchString(errs) {
		t.Errorf("the summary line is not of docs/batch.md's form %q:\n%s", summary, errs)
	}
}

// docExcerpts are the blocks of docs/integration.md that are excerpts of
// a file TestIntegration builds or loads, by first line.
var docExcerpts = []struct{ first, file string }{
	{"SFRAME_GEN ?= sframe-gen", "testdata/integration/make/Makefile"},
	{"sframe_gen = find_program('sframe-gen')", "testdata/integration/meson/meson.build"},
	{"override_dh_sframe:", "testdata/integration/deb/pkg/debian/rules"},
	{"%__brp_sframe_gen %{__sframe_gen} %{__sframe_gen_flags} %{?_smp_build_ncpus:-j %{_smp_build_ncpus}} -- \"%{buildroot}\"", "docs/integration/macros.sframe-gen"},
	{"install-exec-hook:", "testdata/integration/autotools/Makefile.am"},
}

// TestIntegrationDocExcerpts checks that each block of docExcerpts is in
// its file as it is written, comments aside (in both): each of its
// paragraphs (parted by blank lines) is lines of the file, one after the
// other, the paragraphs in the block's order. TestIntegration runs the
// recipes of docs/integration.md by building projects with those files.
func TestIntegrationDocExcerpts(t *testing.T) {
	root := filepath.Join(testdataDir(), "..")
	code := func(text string) string {
		var b strings.Builder
		for _, l := range strings.Split(text, "\n") {
			if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "#") {
				b.WriteString(strings.TrimRight(l, " \t") + "\n")
			}
		}
		return b.String()
	}
	for _, e := range docExcerpts {
		file := "\n" + code(readDoc(t, root, e.file))
		at := 0
		for _, para := range strings.Split(docBlock(t, "docs/integration.md", e.first), "\n\n") {
			i := strings.Index(file[at:], "\n"+code(para))
			if i < 0 {
				t.Errorf("docs/integration.md: the block starting %q is not in %s as written: from\n%s", e.first, e.file, code(para))
				break
			}
			at += i + len(code(para))
		}
	}
}

// TestRowsDocSample checks that docs/rows.md's text sample is lines of what
// sframe-gen rows prints on testdata/cc/x86_64/O0/tree-sitter.o, one after
// the other.
func TestRowsDocSample(t *testing.T) {
	sample := docBlock(t, "docs/rows.md", "FDE 0x18 pc 0x0..0x14 CIE 0x0 section 1")
	out, errs, code := runCLI("rows", filepath.Join(testdataDir(), "cc", "x86_64", "O0", "tree-sitter.o"))
	if code != exitOK {
		t.Fatalf("rows: exit %d: %s", code, errs)
	}
	if !strings.Contains("\n"+out, "\n"+sample) {
		t.Errorf("docs/rows.md's sample is not in rows' output on tree-sitter.o:\n%s", sample)
	}
}

// TestLowerDocReasons checks that each reason listed in docs/lower.md's
// two lists (ours and gas's texts, up to two spaces: the rest is a
// comment) is a reason lower gives: its form (N a number, {A|B} one of
// them, 0x.. a hexadecimal number) matches a text of lower's code, of the
// tests that expect it, or of the golden warnings of testdata (gas's,
// compared by the tests), so that a reason renamed or dropped in the code
// fails here.
func TestLowerDocReasons(t *testing.T) {
	root := filepath.Join(testdataDir(), "..")
	var corpus strings.Builder
	files, _ := filepath.Glob(filepath.Join(root, "lower", "*.go"))
	warnings, _ := filepath.Glob(filepath.Join(root, "testdata", "gas", "*", "*.warnings"))
	for _, f := range append(files, warnings...) {
		corpus.WriteString(string(readFile(t, f)) + "\n")
	}
	forms := 0
	for _, first := range []string{
		"CFA offset N not representable on s390x (stored as (offset-160)/8 in 32 bits)",
		"non-default RA register N",
	} {
		for _, line := range strings.Split(strings.TrimSpace(docBlock(t, "docs/lower.md", first)), "\n") {
			form := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), 2)[0]
			rx := regexp.QuoteMeta(form)
			rx = strings.NewReplacer(`\{`, `(?:`, `\}`, `)`, `\|`, `|`, `0x\.\.`, `0x[0-9a-f]+`).Replace(rx)
			rx = regexp.MustCompile(`\bN\b`).ReplaceAllString(rx, `(?:-?\d+|%d)`)
			if !regexp.MustCompile(rx).MatchString(corpus.String()) {
				t.Errorf("docs/lower.md: reason %q is in no text of lower's code, its tests or the golden warnings", form)
			}
			forms++
		}
	}
	if forms < 20 {
		t.Errorf("only %d reasons found in docs/lower.md's lists", forms)
	}
}
