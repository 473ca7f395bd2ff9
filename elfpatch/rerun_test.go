package elfpatch

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRepatchAsFromInput: every committed linked file (executables and
// shared libraries of x86-64, AArch64 and s390x, without SFrame) patched
// with a section of one size and then of another is byte for byte the
// file patched with the second alone, for every ordered pair of sizes
// (the same twice included), sizes chosen so that the sections go into
// the space after a PT_LOAD or need a new one, the first run moving
// sections for one more program header or two: the earlier section, its
// PT_LOAD or growth, PT_GNU_SFRAME, section header and name, and moved
// sections are taken back out first (Layout.Replaced).
func TestRepatchAsFromInput(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/link/*/*")
	sizes := []int{24, 400, 1500, 5000, 40000}
	n := 0
	for _, path := range paths {
		base := filepath.Base(path)
		if strings.Contains(base, ".gs.") || !(strings.HasSuffix(base, ".exe") || strings.HasSuffix(base, ".so")) {
			continue
		}
		plain, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n++
		// As the file is, and with bytes after its section header table
		// (a signature, an appended payload): the section-name table is
		// then copied to the end, and a re-run puts both tables back.
		for _, in := range [][]byte{plain, append(slices.Clip(plain), "appended data"...)} {
			name := filepath.Base(filepath.Dir(path)) + "/" + base
			if len(in) > len(plain) {
				name += "+appended"
			}
			t.Run(name, func(t *testing.T) {
				one := make([][]byte, len(sizes))
				lays := make([]Layout, len(sizes))
				for i, size := range sizes {
					out, lay, err := patchBytes(t, in, bytes.Repeat([]byte{byte(i + 1)}, size))
					if err != nil {
						t.Fatalf("%d bytes: %v", size, err)
					}
					one[i], lays[i] = out, lay
				}
				for a := range sizes {
					for b, size := range sizes {
						got, lay, err := patchBytes(t, one[a], bytes.Repeat([]byte{byte(b + 1)}, size))
						if err != nil {
							t.Fatalf("%d then %d bytes: %v", sizes[a], size, err)
						}
						if !lay.Replaced || !bytes.Equal(got, one[b]) {
							t.Errorf("%d then %d bytes: %d bytes, %d alone, identical %v (first %+v; second %+v)", sizes[a], size, len(got), len(one[b]), bytes.Equal(got, one[b]), lays[a], lay)
						}
					}
				}
			})
		}
	}
	if n < 20 {
		t.Fatalf("%d linked files in testdata/link, want at least 20", n)
	}
}
