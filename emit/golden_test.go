package emit

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdataDir is the repository's testdata directory, or $SFRAME_TESTDATA.
func testdataDir() string {
	if d := os.Getenv("SFRAME_TESTDATA"); d != "" {
		return d
	}
	return filepath.Join("..", "testdata")
}

// golden is one ELF file with a .sframe section and, when there is one,
// the objdump --sframe text it must dump as.
type golden struct {
	elf    string // path of the ELF file
	objump string // path of the expected dump, "" if none
}

// goldenFiles lists every golden ELF under testdata/gas, testdata/link
// and testdata/cc: each X.objdump beside an ELF named X or X.o.
func goldenFiles(t testing.TB) []golden {
	t.Helper()
	var out []golden
	for _, sub := range []string{"gas", "link", "cc", "sample"} {
		root := filepath.Join(testdataDir(), sub)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return fs.SkipDir
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".objdump") {
				return nil
			}
			base := strings.TrimSuffix(path, ".objdump")
			for _, cand := range []string{base, base + ".o"} {
				if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() {
					out = append(out, golden{elf: cand, objump: path})
					return nil
				}
			}
			t.Errorf("%s: no ELF file %s or %s.o beside it", path, base, base)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no golden files (*.objdump) under %s/{gas,link,cc}", testdataDir())
	}
	return out
}

// sframeOf returns the raw .sframe contents of an ELF file, its section
// address (0 in a relocatable object) and, for a relocatable object, the
// contents with the FDE start relocations applied.
func sframeOf(t testing.TB, path string) (raw, relocated []byte, addr uint64, ok bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	idx := -1
	for i, s := range f.Sections {
		if s.Name == ".sframe" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, nil, 0, false
	}
	sec := f.Sections[idx]
	raw, err = sec.Data()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	relocated = bytes.Clone(raw)
	if f.Type != elf.ET_REL {
		return raw, relocated, sec.Addr, true
	}
	syms, _ := f.Symbols()
	for _, rs := range f.Sections {
		if rs.Type != elf.SHT_RELA || int(rs.Info) != idx {
			continue
		}
		rel, err := rs.Data()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		bo := f.ByteOrder
		for p := 0; p+24 <= len(rel); p += 24 {
			off := bo.Uint64(rel[p:])
			sym := bo.Uint64(rel[p+8:]) >> 32
			var s uint64
			if sym > 0 && int(sym) <= len(syms) {
				s = syms[sym-1].Value
			}
			bo.PutUint64(relocated[off:], s+bo.Uint64(rel[p+16:])-off)
		}
	}
	return raw, relocated, 0, true
}

func TestGoldenRoundTrip(t *testing.T) {
	for _, g := range goldenFiles(t) {
		t.Run(filepath.ToSlash(g.elf), func(t *testing.T) {
			raw, _, _, ok := sframeOf(t, g.elf)
			if !ok {
				if !emptyGolden(t, g) {
					t.Fatalf("no .sframe section")
				}
				return
			}
			sec, err := Decode(raw)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			enc, err := sec.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(enc, raw) {
				t.Errorf("Encode(Decode(x)) != x\n got %x\nwant %x", enc, raw)
			}
		})
	}
}

func TestGoldenDump(t *testing.T) {
	for _, g := range goldenFiles(t) {
		t.Run(filepath.ToSlash(g.elf), func(t *testing.T) {
			want, err := os.ReadFile(g.objump)
			if err != nil {
				t.Fatal(err)
			}
			_, data, addr, ok := sframeOf(t, g.elf)
			if !ok {
				if len(want) != 0 {
					t.Fatalf("no .sframe section")
				}
				return
			}
			sec, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			var got bytes.Buffer
			if err := Dump(&got, sec, addr, ".sframe"); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("Dump differs from %s:\n%s", g.objump, firstDiff(got.String(), string(want)))
			}
		})
	}
}

// emptyGolden reports whether g's expected dump is empty: regen.sh writes
// an empty file when gas made no .sframe.
func emptyGolden(t testing.TB, g golden) bool {
	st, err := os.Stat(g.objump)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size() == 0
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w || i >= len(gl) || i >= len(wl) {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
	return "(equal)"
}
