package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ldRelocatable names the committed objects testdata/regen.sh makes with
// ld -r: ld, not as, wrote them (and their twins), so they are not gas's
// output and their .sframe is ld's merge of the inputs'.
func ldRelocatable(obj string) bool {
	name := strings.TrimSuffix(filepath.Base(obj), ".o")
	return name == "relocatable" || name == "leveldb"
}

// TestGenerateObjectsWhole runs `sframe-gen --gas-compat -o` on every
// committed object GNU as made without --gsframe and compares the whole
// output with the object as --gsframe made from the same source, byte for
// byte (what `cmp` does), on x86-64, AArch64 (both byte orders) and s390x.
// The objects left out are those ld -r made and those where gas dropped a
// function for .cfi_label (a known difference of the section itself,
// docs/lower.md).
func TestGenerateObjectsWhole(t *testing.T) {
	dir := t.TempDir()
	same := 0
	arches := map[string]int{}
	for i, p := range objectPairs(t) {
		in := p[0]
		if ldRelocatable(in) || labelDropped(t, in) {
			continue
		}
		twin := strings.TrimSuffix(in, ".o") + ".gs.o"
		want, err := os.ReadFile(twin)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprintf("%d.o", i))
		if _, stderr, code := runCLI("--gas-compat", "-o", out, in); code != 0 {
			t.Errorf("%s: exit %d: %s", in, code, stderr)
			continue
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: sframe-gen --gas-compat -o differs from %s (%d bytes, want %d)", in, twin, len(got), len(want))
			continue
		}
		same++
		rel, _ := filepath.Rel(testdataDir(), in)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		arches[parts[1]]++
		// A run on gas's own object writes nothing.
		if _, stderr, code := runCLI("--gas-compat", "-o", out, twin); code != 0 {
			t.Errorf("%s: exit %d: %s", twin, code, stderr)
		} else if again, _ := os.ReadFile(out); !bytes.Equal(again, want) {
			t.Errorf("%s: sframe-gen --gas-compat changes as --gsframe's own object", twin)
		}
	}
	for _, a := range []string{"x86_64", "aarch64", "aarch64_be", "s390x"} {
		if arches[a] == 0 {
			t.Errorf("no object of %s compared", a)
		}
	}
	t.Logf("%d objects identical to as --gsframe's: %v", same, arches)
}

// sectionBytes returns the contents of the section name of the ELF file
// path (nil if it has none).
func sectionBytes(t *testing.T, path, name string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(name)
	if s == nil {
		return nil
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
