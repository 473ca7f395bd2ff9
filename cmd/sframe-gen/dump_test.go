package main

import (
	"bytes"
	"encoding/json"
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
	return filepath.Join("..", "..", "testdata")
}

// dumpGoldens maps each golden ELF file (gas .gs.o, linked files, compiled
// objects) to its objdump --sframe text: X.objdump beside X or X.o.
func dumpGoldens(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, sub := range []string{"gas", "link", "cc", "sample"} {
		root := filepath.Join(testdataDir(), sub)
		if _, err := os.Stat(root); err != nil {
			continue
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".objdump") {
				return err
			}
			base := strings.TrimSuffix(path, ".objdump")
			for _, cand := range []string{base, base + ".o"} {
				if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() {
					out[cand] = path
					return nil
				}
			}
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

func runCLI(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	c := &cli{stdout: &o, stderr: &e}
	code = c.main(args)
	return o.String(), e.String(), code
}

func TestDumpGolden(t *testing.T) {
	for file, golden := range dumpGoldens(t) {
		t.Run(filepath.ToSlash(file), func(t *testing.T) {
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runCLI("dump", file)
			if len(want) == 0 {
				// regen.sh writes an empty golden when there is no .sframe.
				if code != exitFailure || errOut != "sframe-gen: "+file+": no .sframe section\n" {
					t.Errorf("exit %d, stderr %q; want \"no .sframe section\"", code, errOut)
				}
				return
			}
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if out != string(want) {
				t.Errorf("dump differs from %s:\n%s", golden, diffLine(out, string(want)))
			}
		})
	}
}

func diffLine(got, want string) string {
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
	return ""
}

func TestDumpJSON(t *testing.T) {
	for file, golden := range dumpGoldens(t) {
		if st, err := os.Stat(golden); err != nil || st.Size() == 0 {
			continue
		}
		out, errOut, code := runCLI("dump", "--json", file)
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr %q", file, code, errOut)
		}
		var v struct {
			Section   string
			Version   int
			NumFDEs   int `json:"num_fdes"`
			NumFREs   int `json:"num_fres"`
			Functions []struct {
				PC   uint64
				Size uint32
				FREs []struct {
					PC  uint64
					CFA *struct {
						Kind string
						Reg  string
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if v.Section != ".sframe" || (v.Version != 2 && v.Version != 3) || v.NumFDEs != len(v.Functions) {
			t.Errorf("%s: section %q version %d, %d FDEs and %d functions", file, v.Section, v.Version, v.NumFDEs, len(v.Functions))
		}
		n := 0
		for _, f := range v.Functions {
			n += len(f.FREs)
		}
		if n != v.NumFREs {
			t.Errorf("%s: num_fres %d, %d FREs listed", file, v.NumFREs, n)
		}
	}
}

func TestDumpErrors(t *testing.T) {
	noSFrame, _ := filepath.Glob(filepath.Join(testdataDir(), "gas", "*", "*.o"))
	var plain string
	for _, f := range noSFrame {
		if !strings.HasSuffix(f, ".gs.o") {
			plain = f
			break
		}
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no file", []string{"dump"}, exitUsage, "sframe-gen: dump: expected a FILE\n"},
		{"two missing files", []string{"dump", "/nonexistent/a", "/nonexistent/b"}, exitFailure,
			"sframe-gen: /nonexistent/a: no such file or directory\n"}, // then b's line
		{"bad flag", []string{"dump", "--nope", "a"}, exitUsage, "sframe-gen: dump: unknown flag: --nope\n"},
		{"missing file", []string{"dump", "/nonexistent/x.o"}, exitFailure,
			"sframe-gen: /nonexistent/x.o: no such file or directory\n"},
		{"not ELF", []string{"dump", "dump_test.go"}, exitFailure,
			"sframe-gen: dump_test.go: not an ELF file\n"},
	}
	if plain != "" {
		tests = append(tests, struct {
			name   string
			args   []string
			code   int
			stderr string
		}{"no .sframe", []string{"dump", plain}, exitFailure, "sframe-gen: " + plain + ": no .sframe section\n"})
	} else {
		t.Errorf("no object without .sframe under %s/gas", testdataDir())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(tt.args...)
			if code != tt.code || out != "" {
				t.Errorf("exit %d (want %d), stdout %q", code, tt.code, out)
			}
			first := strings.SplitAfter(errOut, "\n")[0]
			if first != tt.stderr {
				t.Errorf("stderr\n got %q\nwant %q", errOut, tt.stderr)
			}
		})
	}
}
