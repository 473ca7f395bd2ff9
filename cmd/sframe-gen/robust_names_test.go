package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/elfpatch"
)

// TestNamesEscaped: file and archive member names holding terminal escape
// sequences and other control characters are printed quoted in every
// message (errors, -v lines), in both forms, and the --report JSON keeps
// them exact but escaped (C1 controls such as U+009B, a CSI to some
// terminals, included: encoding/json leaves them raw), as do stats and
// verify's text and JSON; no raw control character reaches the terminal.
func TestNamesEscaped(t *testing.T) {
	dir := t.TempDir()
	obj, err := os.ReadFile(filepath.Join(testdataDir(), "gas/x86_64/debugframe.o"))
	if err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(dir, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	notELF := writeFile(t, tree, "clear\x1b[2J\x1b]0;pwned\x07.o", []byte("not an ELF file\n"), 0)
	good := writeFile(t, tree, "ok\x1b[31m\u009b1m\r.o", obj, 0)
	good2 := writeFile(t, dir, "ok\x1b[31m\u009b1m\r.o", obj, 0)
	header := func(name string, size int) string {
		return fmt.Sprintf("%-16s%-12d%-6d%-6d%-8o%-10d`\n", name+"/", 0, 0, 0, 0o644, size)
	}
	cut := obj[:100] // an ELF member cut inside its header table
	member := "m\x1b[31m.o"
	archive := writeFile(t, tree, "lib.a", []byte(elfpatch.ArchiveMagic+header(member, len(cut))+string(cut)), 0)

	stdout, single, _ := runCLI(notELF)
	_, singleV, _ := runCLI("-v", good2)
	_, singleA, _ := runCLI(archive)
	report, batch, _ := runCLI("-v", "-j", "2", "--report", "-", tree)
	for _, tc := range []struct {
		form, stderr string
		want         []string
	}{
		{"single-file, not ELF", single, []string{"sframe-gen: " + strconv.Quote(notELF) + ": "}},
		{"single-file -v", singleV, []string{"sframe-gen: " + strconv.Quote(good2) + ": wrote .sframe"}},
		{"single-file archive", singleA, []string{"member " + strconv.Quote(member) + ": "}},
		{"batch", batch, []string{"sframe-gen: " + strconv.Quote(good) + ": wrote .sframe", "sframe-gen: " + archive + ": member " + strconv.Quote(member) + ": "}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.stderr, w) {
				t.Errorf("%s: stderr %q does not contain %q", tc.form, tc.stderr, w)
			}
		}
		if i := strings.IndexFunc(strings.TrimSuffix(strings.ReplaceAll(tc.stderr, "\n", ""), "\n"), func(r rune) bool {
			return r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0
		}); i >= 0 {
			t.Errorf("%s: a raw control character at %d of %q", tc.form, i, tc.stderr)
		}
	}
	statsJSON, _, _ := runCLI("stats", "--json", good2)
	verifyJSON, _, _ := runCLI("verify", "--json", good2)
	statsText, _, _ := runCLI("stats", good2)
	if strings.ContainsAny(stdout+report+statsJSON+verifyJSON+statsText, "\x1b\x07\r\u009b") {
		t.Errorf("raw control characters on standard output: %q", stdout+report+statsJSON+verifyJSON+statsText)
	}
	for _, out := range []string{statsJSON, verifyJSON} {
		var v struct{ File string }
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.File != good2 {
			t.Errorf("JSON %q: file %q, %v; want %q", out, v.File, err, good2)
		}
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(report))
	for sc.Scan() {
		var line reportLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("report line %q: %v", sc.Text(), err)
		}
		names[line.File] = true
	}
	for _, p := range []string{notELF, good, archive} {
		if !names[p] {
			t.Errorf("report: no line for %q (%v)", p, names)
		}
	}
}
