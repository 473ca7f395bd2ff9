package verify

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// goldenFiles returns the GNU-made files of testdata with an .sframe
// section; it fails the test when there are none.
func goldenFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{
		"../../testdata/gas/*/*.gs.o",
		"../../testdata/cc/*/*/*.gs.o",
		"../../testdata/link/*/*.gs.o",
		"../../testdata/link/*/*.gs.so",
		"../../testdata/link/*/*.gs.exe",
		"../../testdata/sample/*.gs",
	} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) < 50 {
		t.Fatalf("found only %d golden files with SFrame", len(files))
	}
	return files
}

func checkFile(t *testing.T, path string) *Report {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := File(f, Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

func describe(r *Report) string {
	var b strings.Builder
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "  %s fde %d func %#x addr %#x-%#x: %s\n", p.Kind, p.FDE, p.Func, p.Addr, p.End, p.Msg)
	}
	return b.String()
}

func TestGoldenDump(t *testing.T) {
	if os.Getenv("VERIFY_DUMP") == "" {
		t.Skip()
	}
	for _, path := range goldenFiles(t) {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r, err := File(f, Options{})
		f.Close()
		if err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		if len(r.Problems) > 0 {
			t.Logf("%s: %d fdes\n%s", path, r.Functions, describe(r))
		}
	}
}
