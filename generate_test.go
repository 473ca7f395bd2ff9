package sframegen

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileArchive: WriteFile writes every object of a static
// archive, and returns the section of each in the Outcome's Reports, in
// order; the archive written again is up to date.
func TestWriteFileArchive(t *testing.T) {
	ar := []byte("!<arch>\n")
	names := []string{"addr2.o", "addr4.o"}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", "gas", "x86_64", name))
		if err != nil {
			t.Fatal(err)
		}
		ar = fmt.Appendf(ar, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", name+"/", "0", "0", "0", "644", len(data))
		ar = append(ar, data...)
		if len(data)%2 == 1 {
			ar = append(ar, '\n')
		}
	}
	path := filepath.Join(t.TempDir(), "lib.a")
	if err := os.WriteFile(path, ar, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := WriteFile(path, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Kind != "archive" || out.Status != Patched || len(out.Reports) != len(names) {
		t.Fatalf("WriteFile: %s, %v, %d reports; want a patched archive, %d reports", out.Kind, out.Status, len(out.Reports), len(names))
	}
	fdes := 0
	for i, rep := range out.Reports {
		if rep.Member != names[i] || rep.Section == nil || len(rep.Section.Bytes()) == 0 {
			t.Errorf("report %d: member %q, section %v; want %s's", i, rep.Member, rep.Section, names[i])
			continue
		}
		fdes += rep.Section.NumFDEs()
	}
	if fdes != out.FDEs {
		t.Errorf("the reports' FDEs add up to %d, the Outcome says %d", fdes, out.FDEs)
	}
	again, err := WriteFile(path, path, Options{})
	if err != nil || again.Status != UpToDate {
		t.Errorf("written again: %v, %v; want up to date", again.Status, err)
	}
}
