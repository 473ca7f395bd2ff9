package emit

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestDumpELF dumps every golden file with DumpELF: objdump --sframe's
// text (relocatable objects at address 0), after a line naming the file
// when it is named; as JSON, the "file" member naming it; a file without
// .sframe is ErrNoSFrame.
func TestDumpELF(t *testing.T) {
	for _, g := range goldenFiles(t) {
		t.Run(filepath.ToSlash(g.elf), func(t *testing.T) {
			want, err := os.ReadFile(g.objump)
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.Open(g.elf)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var text, named, asJSON bytes.Buffer
			err = DumpELF(&text, f, "", false)
			if len(want) == 0 {
				if !errors.Is(err, ErrNoSFrame) {
					t.Errorf("a file without .sframe: %v, want ErrNoSFrame", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if text.String() != string(want) {
				t.Errorf("DumpELF differs from %s:\n%s", g.objump, firstDiff(text.String(), string(want)))
			}
			if err := DumpELF(&named, f, "lib.a(x.o)", false); err != nil {
				t.Fatal(err)
			}
			if named.String() != "\nlib.a(x.o):\n"+string(want) {
				t.Errorf("named: %s", firstDiff(named.String(), "\nlib.a(x.o):\n"+string(want)))
			}
			if err := DumpELF(&asJSON, f, "lib.a(x.o)", true); err != nil {
				t.Fatal(err)
			}
			var v struct {
				File string `json:"file"`
			}
			if err := json.Unmarshal(asJSON.Bytes(), &v); err != nil || v.File != "lib.a(x.o)" {
				t.Errorf("JSON: file %q, %v", v.File, err)
			}
		})
	}
}
