package lower

import (
	"bytes"
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// TestPack checks that a packed result encodes to the same bytes as the
// unpacked one, in both modes, for every linked file and object under
// testdata (PLT FDEs, placement and the s390x padding included) and the
// system's libc.
func TestPack(t *testing.T) {
	var files []string
	for _, pat := range []string{"link/*/*.so", "link/*/*.exe", "gas/*/*.o", "cc/*/*/*.o"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", pat))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d files under testdata", len(files))
	}
	files = append(files, "/lib/x86_64-linux-gnu/libc.so.6")
	n := 0
	for _, name := range files {
		f, err := elf.Open(name)
		if err != nil {
			continue // the system file may be missing
		}
		tg, err := TargetForELF(f)
		if err != nil {
			f.Close()
			continue
		}
		frames, err := cfi.Read(f, cfi.Auto)
		if err != nil {
			f.Close()
			continue
		}
		for _, gas := range []bool{false, true} {
			var enc [2][]byte
			for k, pack := range []bool{false, true} {
				res, _, err := LowerFile(f, frames, tg, Options{GasCompat: gas, Pack: pack})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if pack && len(res.Section.FDEs) > 0 && res.Section.Packed == nil {
					t.Fatalf("%s: Pack gave an unpacked section", name)
				}
				if !tg.Relocatable {
					res.Place(0x10000)
				}
				if enc[k], err = res.Section.Encode(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if !bytes.Equal(enc[0], enc[1]) {
				t.Errorf("%s (gas-compat %v): packed section differs from the unpacked one", name, gas)
			}
		}
		f.Close()
		n++
	}
	if n < 20 {
		t.Fatalf("only %d files could be lowered", n)
	}
}
