package elfpatch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/elfcheck"
)

// gasTwins returns every committed object that GNU as made without
// --gsframe (testdata/gas, cc and link) whose twin as --gsframe made from
// the same source is committed too, as pairs of paths (plain, twin). The
// objects testdata/regen.sh makes with ld -r (relocatable.o, leveldb.o) are
// left out: ld, not as, wrote them, and it puts .sframe where its linker
// script says.
func gasTwins(t *testing.T) [][2]string {
	t.Helper()
	var pairs [][2]string
	for _, pat := range []string{"gas/*/*.gs.o", "cc/*/*/*.gs.o", "link/*/*.gs.o"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", pat))
		for _, gs := range m {
			name := strings.TrimSuffix(filepath.Base(gs), ".gs.o")
			if name == "relocatable" || name == "leveldb" {
				continue
			}
			plain := strings.TrimSuffix(gs, ".gs.o") + ".o"
			if _, err := os.Stat(plain); err == nil {
				pairs = append(pairs, [2]string{plain, gs})
			}
		}
	}
	// Every ABI and both byte orders, with and without relocations.
	for _, dir := range []string{"gas/x86_64/", "gas/aarch64/", "gas/aarch64_be/", "gas/s390x/", "cc/x86_64/", "cc/aarch64/O2-be/", "cc/s390x/", "link/aarch64/"} {
		n := 0
		for _, p := range pairs {
			if strings.Contains(filepath.ToSlash(p[0]), "testdata/"+dir) {
				n++
			}
		}
		if n == 0 {
			t.Fatalf("no gas twins under testdata/%s", dir)
		}
	}
	return pairs
}

// TestPatchObjectGasWhole: an object GNU as made without --gsframe,
// patched with the .sframe and .rela.sframe of its twin made with
// --gsframe, is that twin byte for byte: the sections numbered, named and
// placed as BFD's writer places them, .sframe where as makes it, its
// section symbol where as puts one. Patching the twin itself writes
// nothing new.
func TestPatchObjectGasWhole(t *testing.T) {
	for _, p := range gasTwins(t) {
		plain, gs := p[0], p[1]
		t.Run(strings.TrimPrefix(filepath.ToSlash(plain), "../testdata/"), func(t *testing.T) {
			in, err := os.ReadFile(plain)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(gs)
			if err != nil {
				t.Fatal(err)
			}
			if !hasSection(t, gs, ".sframe") {
				// gas writes no .sframe for an object without CFI
				// (nocfi.s), nor does generate: the two files are one.
				if !bytes.Equal(in, want) {
					t.Errorf("%s has no .sframe but differs from %s: %s", gs, plain, objectDiff(in, want))
				}
				return
			}
			sf, relocs := objectSFrame(t, gs)
			got, err := PatchObjectBytes(in, sf, relocs)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("differs from %s: %s", gs, objectDiff(got, want))
			}
			again, err := PatchObjectBytes(want, sf, relocs)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, want) {
				t.Errorf("patching %s with its own section changes it: %s", gs, objectDiff(again, want))
			}
			if err := elfcheck.CheckPreserved(in, got); err != nil {
				t.Error(err)
			}
		})
	}
}

// objectDiff says where two objects differ: the first differing section
// header field or section contents, else the first differing byte.
func objectDiff(got, want []byte) string {
	fg, err1 := parse(bytes.NewReader(got), int64(len(got)))
	fw, err2 := parse(bytes.NewReader(want), int64(len(want)))
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("unparsable: %v %v", err1, err2)
	}
	if len(fg.sects) != len(fw.sects) {
		return fmt.Sprintf("%d sections, want %d", len(fg.sects), len(fw.sects))
	}
	for i := range fg.sects {
		g, w := fg.sects[i], fw.sects[i]
		if g != w {
			return fmt.Sprintf("section %d (%s): header %+v, want %+v (%s)", i, fw.name(&w), g, w, fg.name(&g))
		}
		if w.hasContent() && !bytes.Equal(got[g.Off:g.Off+g.Size], want[w.Off:w.Off+w.Size]) {
			return fmt.Sprintf("section %d (%s): contents differ", i, fw.name(&w))
		}
	}
	if fg.hdr != fw.hdr {
		return fmt.Sprintf("ELF header %+v, want %+v", fg.hdr, fw.hdr)
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("byte %#x: %#x, want %#x (sizes %d, %d)", i, got[i], want[i], len(got), len(want))
		}
	}
	return fmt.Sprintf("sizes %d, want %d", len(got), len(want))
}

// TestPatchObjectNotBFD: an object whose file BFD did not lay out (here a
// gas object with 8 bytes of padding before its section header table,
// which BFD never leaves) keeps its section indices, the new sections
// appended, and its output is its own layout again; the same object
// unedited gets BFD's numbering.
func TestPatchObjectNotBFD(t *testing.T) {
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			dir := filepath.Join("..", "testdata", "gas", arch)
			in, err := os.ReadFile(filepath.Join(dir, "basic.o"))
			if err != nil {
				t.Fatal(err)
			}
			sf, relocs := objectSFrame(t, filepath.Join(dir, "basic.gs.o"))
			f, err := parse(bytes.NewReader(in), int64(len(in)))
			if err != nil {
				t.Fatal(err)
			}
			n := len(f.sects)
			if _, ok := bfdLayout(f); !ok {
				t.Fatal("gas's object not taken for BFD's")
			}
			shoff := f.hdr.shoff
			edited := append(append(append([]byte(nil), in[:shoff]...), make([]byte, 8)...), in[shoff:]...)
			f.hdr.order.PutUint64(edited[40:], shoff+8)
			for _, c := range []struct {
				name   string
				in     []byte
				sframe int // the index .sframe gets
			}{{"padded", edited, n}, {"gas", in, n - 3}} {
				out, err := PatchObjectBytes(c.in, sf, relocs)
				if err != nil {
					t.Fatal(err)
				}
				g, err := parse(bytes.NewReader(out), int64(len(out)))
				if err != nil {
					t.Fatal(err)
				}
				if got := g.name(&g.sects[c.sframe]); got != ".sframe" || g.name(&g.sects[c.sframe+1]) != ".rela.sframe" {
					t.Errorf("%s: section %d is %s, want .sframe then .rela.sframe", c.name, c.sframe, got)
				}
				if err := elfcheck.CheckPreserved(c.in, out); err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
				again, err := PatchObjectBytes(out, sf, relocs)
				if err != nil || !bytes.Equal(again, out) {
					t.Errorf("%s: second patch differs (%v)", c.name, err)
				}
			}
		})
	}
}
