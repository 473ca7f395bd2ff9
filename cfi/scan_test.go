package cfi

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// compareScan checks that cutting fr's section into n parts and scanning
// each gives the FDEs and errors Read gave (fr is Read's result).
func compareScan(fr *Frames, n int) string {
	cuts, fdes := fr.Cut(n)
	return compareParts(fr, n, cuts, fdes)
}

// compareParts is compareScan for the cut into n parts cuts, fdes.
func compareParts(fr *Frames, n int, cuts, fdes []int) string {
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
	if msg := sameAsRead(fr, got, errs); msg != "" {
		return fmt.Sprintf("%d parts: %s", n, msg)
	}
	return ""
}

// sameAsRead says how the FDEs and errors the parts of fr's section gave
// differ from Read's (fr is Read's result): "" when they do not.
func sameAsRead(fr *Frames, got []FDE, errs []*EntryError) string {
	if len(got) != len(fr.FDEs) {
		return fmt.Sprintf("%d FDEs, Read %d", len(got), len(fr.FDEs))
	}
	for i, f := range fr.FDEs {
		g := got[i]
		if g.CIE == nil || !reflect.DeepEqual(*g.CIE, *f.CIE) {
			return fmt.Sprintf("FDE %#x: CIE %+v, Read %+v", f.Offset, g.CIE, f.CIE)
		}
		g.CIE = f.CIE
		if !reflect.DeepEqual(g, *f) {
			return fmt.Sprintf("FDE %d: %+v, Read %+v", i, g, *f)
		}
	}
	if fmt.Sprint(errs) != fmt.Sprint(fr.Errors) {
		return fmt.Sprintf("errors %v, Read %v", errs, fr.Errors)
	}
	return ""
}

// exactCounts checks that CutWeighted's cuts for weights start at entries,
// each at the first entry at or past its share of the section (bounds)
// that follows the cut before it, and that fdes counts the FDE entries of
// each part (CIEs left out), as the parser's header reader walks them one
// at a time: what CutWeighted's walk of the usual entries (walkUsual)
// must give.
func exactCounts(fr *Frames, weights, cuts, fdes []int) string {
	total, bounds := 0, []int{0}
	for _, w := range weights {
		total += max(w, 1)
	}
	for k, sum := 1, 0; k < len(weights); k++ {
		sum += max(weights[k-1], 1)
		bounds = append(bounds, len(fr.Data)*sum/total)
	}
	p := newParser(fr, &Frames{})
	want := make([]int, len(fdes))
	k, prev := 0, -1 // the part, the entry before
	for off := 0; off < len(fr.Data); {
		if k+1 < len(fdes) && off >= cuts[k+1] {
			if off != cuts[k+1] || off < bounds[k+1] || prev >= bounds[k+1] && prev != cuts[k] {
				return fmt.Sprintf("part %d starts at %#x, asked %#x, the entry before at %#x", k+1, cuts[k+1], bounds[k+1], prev)
			}
			k++
		}
		h, next, err := p.readHeader(off)
		if err != nil {
			if _, stop := err.(stopError); stop {
				break
			}
		} else if h.end != 0 && !p.isCIE(&h) {
			want[k]++
		}
		prev, off = off, next
	}
	if fmt.Sprint(want) != fmt.Sprint(fdes) {
		return fmt.Sprintf("FDEs per part %v, the entries walked one at a time %v (cuts %v)", fdes, want, cuts)
	}
	return ""
}

// TestScan checks Cut and Scanner against Read on every CFI section under
// testdata (objects with relocations, linked files, both sources, both
// byte orders) and on the system's big libraries.
func TestScan(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/*/*/*")
	paths = append(paths, sysfiles.CompilerLib(t, "gcc", "libc.so.6"))
	if llvm := sysfiles.BigLib(t); llvm != "" {
		paths = append(paths, llvm)
	}
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
			weights := []int{4, 4, 3, 3, 2, 2, 1, 1}
			cuts, fdes := fr.CutWeighted(weights)
			if msg := exactCounts(fr, weights, cuts, fdes); msg != "" {
				t.Errorf("%s %v: weighted: %s", p, src, msg)
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

// TestScanUsual checks the Scanner's way for the usual FDE against Read's
// on entries made to take it or to just miss it: 4- and 8-byte addresses,
// a start that wraps below zero, an LSDA (decoded within the augmentation
// data), augmentation data too long for one byte, a CIE pointer to
// another CIE than the last FDE's.
func TestScanUsual(t *testing.T) {
	le := binary.LittleEndian
	cie := func(aug string, augData ...byte) []byte {
		body := []byte{0, 0, 0, 0, 1}
		body = append(body, aug...)
		body = append(body, 0, 1, 0x78, 16) // code align 1, data align -8, RA 16
		if len(aug) > 0 && aug[0] == 'z' {
			body = append(body, byte(len(augData)))
			body = append(body, augData...)
		}
		body = append(body, 0x0c, 7, 8) // def_cfa rsp+8
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		return append(le.AppendUint32(nil, uint32(len(body))), body...)
	}
	var sec []byte
	fde := func(cieOff int, start int32, size uint32, aug []byte, long bool) {
		off := len(sec)
		body := le.AppendUint32(nil, uint32(off+4-cieOff))
		body = le.AppendUint32(body, uint32(start))
		body = le.AppendUint32(body, size)
		if aug != nil {
			if long {
				body = append(body, byte(len(aug))|0x80, 0)
			} else {
				body = append(body, byte(len(aug)))
			}
			body = append(body, aug...)
		}
		body = append(body, 0x41, 0x0e, 16, 0x86, 2, 0, 0)
		sec = append(sec, le.AppendUint32(nil, uint32(len(body)))...)
		sec = append(sec, body...)
	}
	zr := len(sec)
	sec = append(sec, cie("zR", 0x1b)...)
	fde(zr, 0x100, 0x20, []byte{}, false)
	fde(zr, 0x200, 0x20, []byte{}, false)
	fde(zr, -0x7000_0000, 0x20, []byte{}, false) // wraps below 0
	fde(zr, 0x300, 0x20, []byte{}, true)         // a 2-byte augmentation length
	zplr := len(sec)
	sec = append(sec, cie("zPLR", 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x1b, 0x1b)...)
	fde(zplr, 0x400, 0x30, []byte{0x10, 0, 0, 0}, false)
	fde(zplr, 0x500, 0x30, []byte{0xf0, 0xff, 0xff, 0xff}, false)
	fde(zplr, 0x600, 0x30, []byte{0x10, 0}, false) // an LSDA cut short by the augmentation data
	fde(zr, 0x700, 0x20, []byte{}, false)          // back to the first CIE
	for _, addr := range []int{4, 8} {
		fr, err := ReadSection(sec, EHFrame, PointerContext{Order: le, AddrSize: addr, SectionAddr: 0x1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(fr.FDEs) < 6 || len(fr.Errors) == 0 {
			t.Fatalf("%d-byte addresses: %d FDEs, errors %v: not the section meant", addr, len(fr.FDEs), fr.Errors)
		}
		for _, n := range []int{1, 3} {
			if msg := compareScan(fr, n); msg != "" {
				t.Errorf("%d-byte addresses: %s", addr, msg)
			}
		}
	}
}

// TestCutWeighted checks that CutWeighted cuts parts of the sizes asked
// (within the largest entry) that scan as Read reads, on the system's big
// libraries.
func TestCutWeighted(t *testing.T) {
	libs := []string{sysfiles.CompilerLib(t, "gcc", "libc.so.6"), sysfiles.CompilerLib(t, "gcc", "libstdc++.so.6")}
	if llvm := sysfiles.BigLib(t); llvm != "" {
		libs = append(libs, llvm)
	}
	for _, p := range libs {
		ef, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := Read(ef, EHFrame)
		ef.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		// The largest entry: how far a cut may be from where it is asked.
		largest := 0
		for off := 0; off+4 <= len(fr.Data); {
			n := int(binary.LittleEndian.Uint32(fr.Data[off:])) + 4
			largest = max(largest, n)
			off += n
		}
		for _, weights := range [][]int{{1}, {4, 4, 3, 3, 2, 2, 1, 1}, {1, 10}, {5, 0, 5}} {
			cuts, fdes := fr.CutWeighted(weights)
			if msg := compareParts(fr, len(weights), cuts, fdes); msg != "" {
				t.Errorf("%s, weights %v: %s", p, weights, msg)
				continue
			}
			total := 0
			for _, w := range weights {
				total += max(w, 1)
			}
			sum := 0
			for k := 1; k < len(cuts)-1; k++ {
				sum += max(weights[k-1], 1)
				want := len(fr.Data) * sum / total
				if cuts[k] < want || cuts[k] > want+largest {
					t.Errorf("%s, weights %v: part %d starts at %#x, asked %#x (entries of up to %#x bytes)", p, weights, k, cuts[k], want, largest)
				}
			}
		}
	}
}
