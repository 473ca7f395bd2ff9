package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// TestStrict checks --strict: without it, functions gas would skip and
// broken CFI entries are left out (reported) and the rest of the file is
// written; with it, any of them makes generate fail with status 1 and write
// nothing.
func TestStrict(t *testing.T) {
	td := testdataDir()
	type tc struct {
		name  string
		input string
		// breakFDE, when >= 0, forges that FDE's CIE pointer so that cfi
		// reports the entry as broken.
		breakFDE int
		// clean: nothing skipped, nothing broken.
		clean bool
	}
	var cases []tc
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		cases = append(cases,
			tc{arch + " skipped functions", "gas/" + arch + "/warnings.o", -1, false},
			tc{arch + " all rejected", "gas/" + arch + "/allrejected.o", -1, false},
			tc{arch + " clean object", "gas/" + arch + "/basic.o", -1, true},
			tc{arch + " broken FDE in object", "link/" + arch + "/relocatable.o", 1, false},
			tc{arch + " broken FDE in executable", "link/" + arch + "/pie.exe", 0, false},
			tc{arch + " clean shared library", "link/" + arch + "/lazy.so", -1, true},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join(td, c.input))
			if err != nil {
				t.Fatal(err)
			}
			in := orig
			if c.breakFDE >= 0 {
				in = strictBreakFDE(t, orig, c.breakFDE)
			}
			dir := t.TempDir()
			src := filepath.Join(dir, "in")
			if err := os.WriteFile(src, in, 0o644); err != nil {
				t.Fatal(err)
			}
			fdes := strictCountFDEs(t, in)

			// -v: the list of problems.
			out := filepath.Join(dir, "out")
			_, stderr, code := runCLI("-v", "-o", out, src)
			skipped := strings.Count(stderr, ": no SFrame FDE: ")
			broken := len(regexp.MustCompile(`(?m)^sframe-gen: .*: \.eh_frame: offset 0x`).FindAllString(stderr, -1))
			if c.breakFDE >= 0 && broken != 1 {
				t.Fatalf("want one broken entry reported, got %d; stderr:\n%s", broken, stderr)
			}
			if c.clean != (skipped+broken == 0) {
				t.Fatalf("clean %v, but %d skipped and %d broken; stderr:\n%s", c.clean, skipped, broken, stderr)
			}
			t.Logf("%d FDEs, %d broken, %d skipped, exit %d", fdes, broken, skipped, code)
			allSkipped := skipped == fdes-broken
			if allSkipped && !strictIsRel(in) {
				// A linked file with nothing to write fails anyway.
				if code != exitFailure {
					t.Errorf("exit %d for a linked file where every function is skipped", code)
				}
			} else if code != exitOK {
				t.Fatalf("without --strict: exit %d; stderr:\n%s", code, stderr)
			} else if got := strictSFrameFDEs(t, out); got < fdes-broken-skipped || (strictIsRel(in) && got != fdes-broken-skipped) {
				t.Errorf("output has %d SFrame FDEs; want %d functions - %d broken - %d skipped", got, fdes, broken, skipped)
			}

			// Without -v: the broken entries are still reported, the skipped
			// functions not.
			os.Remove(out)
			_, stderr, code = runCLI("-o", out, src)
			if n := strings.Count(stderr, "\n"); code == exitOK && n != broken {
				t.Errorf("without -v: %d stderr lines, want %d (the broken entries):\n%s", n, broken, stderr)
			}

			// --strict, to -o and in place.
			os.Remove(out)
			_, stderr, code = runCLI("--strict", "-o", out, src)
			want := fmt.Sprintf("sframe-gen: %s: --strict: %s and %s could not be represented\n", src, plural(skipped, "function"),
				strings.Replace(plural(broken, "CFI entry"), "entrys", "entries", 1))
			if c.clean {
				if code != exitOK {
					t.Errorf("--strict on a clean file: exit %d; stderr:\n%s", code, stderr)
				}
				return
			}
			if code != exitFailure || !strings.HasSuffix(stderr, want) {
				t.Errorf("--strict: exit %d, stderr:\n%s\nwant status 1 and last line %q", code, stderr, want)
			}
			if n := strings.Count(stderr, ": no SFrame FDE: "); n != skipped {
				t.Errorf("--strict lists %d skipped functions, -v %d", n, skipped)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("--strict failed but wrote %s", out)
			}
			_, _, code = runCLI("--strict", src)
			if got, _ := os.ReadFile(src); code != exitFailure || !bytes.Equal(got, in) {
				t.Errorf("--strict in place: exit %d, file changed %v", code, !bytes.Equal(got, in))
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("directory holds %d entries, want 1 (temporary file left?)", len(ents))
			}
		})
	}
}

// strictBreakFDE forges the CIE pointer of the i-th FDE of .eh_frame so that it
// points at the FDE itself, which is not a CIE.
func strictBreakFDE(t *testing.T, data []byte, i int) []byte {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := cfi.Read(f, cfi.EHFrame)
	if err != nil || len(fr.Errors) > 0 || i >= len(fr.FDEs) {
		t.Fatalf("reading .eh_frame: %v (%d FDEs)", err, len(fr.FDEs))
	}
	sec := f.Section(".eh_frame")
	p := sec.Offset + fr.FDEs[i].Offset + 4
	out := append([]byte(nil), data...)
	f.ByteOrder.PutUint32(out[p:], 4) // the CIE "at" the FDE's own length field
	return out
}

// strictCountFDEs returns the number of FDEs in .eh_frame, broken ones included.
func strictCountFDEs(t *testing.T, data []byte) int {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := cfi.Read(f, cfi.EHFrame)
	if err != nil {
		t.Fatal(err)
	}
	return len(fr.FDEs) + len(fr.Errors)
}

func strictIsRel(data []byte) bool {
	f, err := elf.NewFile(bytes.NewReader(data))
	return err == nil && f.Type == elf.ET_REL
}

// strictSFrameFDEs returns the number of FDEs in the .sframe of the file at path.
func strictSFrameFDEs(t *testing.T, path string) int {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".sframe")
	if s == nil {
		t.Fatalf("%s: no .sframe", path)
	}
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	sec, err := emit.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return sec.NumFDEs()
}
