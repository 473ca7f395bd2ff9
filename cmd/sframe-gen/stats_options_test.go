package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit/stats"
)

// TestStatsSizeIsRawSize checks that stats' dry run, given the options of
// generate, reports the size --raw writes with the same options, for every
// ELF file of testdata/link (objects, executables and libraries of every
// ABI) and every option set the section's bytes depend on. A dry run and
// the command run one pipeline (sframegen.Generator), so they cannot
// disagree; this holds them to it.
func TestStatsSizeIsRawSize(t *testing.T) {
	sets := [][]string{
		nil,
		{"--gas-compat"},
		{"--share-fres"},
		{"--no-share-fres"},
		{"--sframe-version", "2"},
		{"--sframe-version", "2", "--v2-layout", "2.44"},
		{"--sframe-version", "2", "--no-share-fres"},
	}
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw")
	checked := 0
	for _, file := range libraryFiles(t) {
		for _, set := range sets {
			name := filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file) + " " + strings.Join(set, " ")
			os.Remove(raw)
			_, rawErr, rawCode := runCLI(append(append([]string{"--raw", "-o", raw}, set...), file)...)
			stdout, statsErr, statsCode := runCLI(append(append([]string{"stats", "--json", "--dry-run"}, set...), file)...)
			if rawCode != exitOK {
				if statsCode == exitOK && !strings.Contains(rawErr, "no function has an SFrame representation") {
					t.Errorf("%s: --raw failed (%s); stats did not", name, strings.TrimSpace(rawErr))
				}
				continue
			}
			if statsCode != exitOK {
				t.Errorf("%s: stats failed (%s); --raw did not", name, strings.TrimSpace(statsErr))
				continue
			}
			var st stats.Stats
			if err := json.Unmarshal([]byte(stdout), &st); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			written, err := os.Stat(raw)
			if err != nil {
				t.Fatal(err)
			}
			if int64(st.SectionBytes) != written.Size() {
				t.Errorf("%s: stats says %d bytes, --raw writes %d", name, st.SectionBytes, written.Size())
			}
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("only %d files and option sets compared", checked)
	}
	t.Logf("%d files and option sets compared", checked)
}
