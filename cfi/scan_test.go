package cfi

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// compareScan checks that cutting fr's section into n parts and scanning
// each gives the FDEs and errors Read gave (fr is Read's result).
func compareScan(fr *Frames, n int) string {
	cuts, fdes := fr.Cut(n)
	if len(cuts) != len(fdes)+1 || cuts[0] != 0 || cuts[len(cuts)-1] != len(fr.Data) || len(fdes) > max(n, 1) {
		return fmt.Sprintf("Cut(%d) = %v, %v", n, cuts, fdes)
	}
	var got []FDE
	var errs []*EntryError
	for k := range fdes {
		if cuts[k] > cuts[k+1] {
			return fmt.Sprintf("Cut(%d) = %v: not ascending", n, cuts)
		}
		s := fr.Scanner(cuts[k], cuts[k+1])
		var f FDE
		m := 0
		for s.Next(&f) {
			got = append(got, f)
			m++
		}
		if m > fdes[k] {
			return fmt.Sprintf("Cut(%d): part %d gave %d FDEs, bound %d", n, k, m, fdes[k])
		}
		errs = append(errs, s.Errors()...)
	}
	if len(got) != len(fr.FDEs) {
		return fmt.Sprintf("%d parts: %d FDEs, Read %d", n, len(got), len(fr.FDEs))
	}
	for i, f := range fr.FDEs {
		g := got[i]
		if g.CIE == nil || !reflect.DeepEqual(*g.CIE, *f.CIE) {
			return fmt.Sprintf("%d parts: FDE %#x: CIE %+v, Read %+v", n, f.Offset, g.CIE, f.CIE)
		}
		g.CIE = f.CIE
		if !reflect.DeepEqual(g, *f) {
			return fmt.Sprintf("%d parts: FDE %d: %+v, Read %+v", n, i, g, *f)
		}
	}
	if fmt.Sprint(errs) != fmt.Sprint(fr.Errors) {
		return fmt.Sprintf("%d parts: errors %v, Read %v", n, errs, fr.Errors)
	}
	return ""
}

// TestScan checks Cut and Scanner against Read on every CFI section under
// testdata (objects with relocations, linked files, both sources, both
// byte orders) and on the system's big libraries.
func TestScan(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/*/*/*")
	paths = append(paths, "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1")
	sections := 0
	for _, p := range paths {
		ef, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, src := range []Source{EHFrame, DebugFrame} {
			fr, err := Read(ef, src)
			if err != nil {
				continue
			}
			sections++
			for _, n := range []int{1, 2, 3, 7, 64} {
				if msg := compareScan(fr, n); msg != "" {
					t.Errorf("%s %v: %s", p, src, msg)
				}
			}
		}
		ef.Close()
	}
	if sections < 100 {
		t.Errorf("only %d CFI sections found", sections)
	}
}

// TestOpenMapped checks that OpenMapped, given the file's bytes, reads what
// Open reads (compressed sections included), and refuses a file cut before
// the section's end.
func TestOpenMapped(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/*/*/*")
	more, _ := filepath.Glob("testdata/*")
	paths = append(paths, more...)
	n, compressed := 0, 0
	for _, p := range paths {
		file, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		ef, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, src := range []Source{EHFrame, DebugFrame} {
			want, err := Read(ef, src)
			if err != nil {
				continue
			}
			got, err := OpenMapped(ef, src, file)
			if err != nil {
				t.Errorf("%s %v: %v", p, src, err)
				continue
			}
			got.readAll()
			if !bytes.Equal(got.Data, want.Data) || len(got.FDEs) != len(want.FDEs) || fmt.Sprint(got.Errors) != fmt.Sprint(want.Errors) {
				t.Errorf("%s %v: OpenMapped read %d FDEs, %v; Read %d, %v", p, src, len(got.FDEs), got.Errors, len(want.FDEs), want.Errors)
			}
			n++
			sec, _, _ := findSection(ef, src)
			if sec.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(sec.Name, ".zdebug") {
				compressed++
				continue
			}
			if len(want.Data) > 0 {
				if _, err := OpenMapped(ef, src, file[:sec.Offset+sec.Size-1]); err == nil || !strings.Contains(err.Error(), "runs past the end of the file") {
					t.Errorf("%s %v: a file cut in the section: %v", p, src, err)
				}
			}
		}
		ef.Close()
	}
	if n < 100 || compressed == 0 {
		t.Errorf("%d sections read, %d compressed", n, compressed)
	}
}
