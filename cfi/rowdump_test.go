package cfi_test

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// Print the row tables of a shared library's first FDEs as
// "sframe-gen rows" prints them: the PLT's CFA is a DWARF expression.
func ExampleAppendRowsText() {
	f, err := elf.Open("../testdata/link/x86_64/direct.so")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		log.Fatal(err)
	}
	var it cfi.RowIterator
	var b []byte
	for _, fde := range frames.FDEs[:2] {
		if b, err = cfi.AppendRowsText(b, frames, fde, &it); err != nil {
			log.Fatal(err)
		}
	}
	os.Stdout.Write(b)
	// Output:
	// FDE 0x18 pc 0x1000..0x1070 CIE 0x0
	//   0x1000  cfa r7+16  r16 c-8
	//   0x1006  cfa r7+24  r16 c-8
	//   0x1010  cfa exp(770880003f1a3b2a332422)  r16 c-8
	// FDE 0x40 pc 0x1070..0x1078 CIE 0x0
	//   0x1070  cfa r7+8  r16 c-8
}

// The same row table as JSON, as "sframe-gen rows --json" prints it, with
// a member of the caller's first.
func ExampleAppendRowsJSON() {
	f, err := elf.Open("../testdata/link/x86_64/direct.so")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		log.Fatal(err)
	}
	var it cfi.RowIterator
	b, err := cfi.AppendRowsJSON(nil, frames, frames.FDEs[1], &it, []byte(`"file":"direct.so",`))
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(b)
	// Output:
	// {"file":"direct.so","start":4208,"end":4216,"rows":[{"pc":4208,"cfa":{"reg":7,"offset":8},"regs":{"16":{"rule":"offset","offset":-8}}}]}
}

// TestAppendRowsAgree checks that the text and JSON dumps of every FDE of
// the linked files and objects under testdata/link say the same rows: the
// JSON is valid, one object per FDE, with as many rows as the text has
// lines after its FDE line, at the same addresses.
func TestAppendRowsAgree(t *testing.T) {
	files, _ := filepath.Glob("../testdata/link/*/*.so")
	objs, _ := filepath.Glob("../testdata/link/*/*.o")
	files = append(files, objs...)
	if len(files) < 10 {
		t.Fatalf("found %d files under ../testdata/link; want the checked-in set", len(files))
	}
	fdes := 0
	for _, path := range files {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		frames, err := cfi.Read(f, cfi.Auto)
		if err != nil {
			f.Close()
			continue // no CFI
		}
		var it cfi.RowIterator
		for _, fde := range frames.FDEs {
			text, terr := cfi.AppendRowsText(nil, frames, fde, &it)
			js, jerr := cfi.AppendRowsJSON(nil, frames, fde, &it, nil)
			if (terr == nil) != (jerr == nil) {
				t.Errorf("%s: FDE %#x: text error %v, JSON error %v", path, fde.Offset, terr, jerr)
			}
			var obj struct {
				Start, End uint64
				Rows       []struct{ PC uint64 }
			}
			if !bytes.HasSuffix(js, []byte("\n")) || bytes.Count(js, []byte("\n")) != 1 {
				t.Fatalf("%s: FDE %#x: JSON is not one line: %q", path, fde.Offset, js)
			}
			if err := json.Unmarshal(js, &obj); err != nil {
				t.Fatalf("%s: FDE %#x: %v in %s", path, fde.Offset, err, js)
			}
			lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
			if want := fmt.Sprintf("FDE %#x pc %#x..%#x CIE", fde.Offset, obj.Start, obj.End); !strings.HasPrefix(lines[0], want) {
				t.Errorf("%s: text %q, want it to start with %q", path, lines[0], want)
			}
			if len(lines)-1 != len(obj.Rows) {
				t.Fatalf("%s: FDE %#x: %d rows in text, %d in JSON", path, fde.Offset, len(lines)-1, len(obj.Rows))
			}
			for i, r := range obj.Rows {
				if want := fmt.Sprintf("  %#x  cfa ", r.PC); !strings.HasPrefix(lines[i+1], want) {
					t.Errorf("%s: FDE %#x row %d: text %q, JSON pc %#x", path, fde.Offset, i, lines[i+1], r.PC)
				}
			}
			fdes++
		}
		f.Close()
	}
	if fdes < 100 {
		t.Errorf("compared %d FDEs; want the testdata's hundreds", fdes)
	}
}
