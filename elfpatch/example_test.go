package elfpatch_test

import (
	"bytes"
	"debug/elf"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/lower"
)

// Write a shared library with an SFrame section: the section's size is
// known first, elfpatch chooses its address, and the encoder writes the
// PC-relative start fields for that address. The copy gets a loaded
// .sframe and a PT_GNU_SFRAME segment, written through a temporary file
// renamed over the output once complete; the input is not changed.
func ExamplePatchLinked() {
	in := "../testdata/link/x86_64/direct.so"
	f, err := elf.Open(in)
	if err != nil {
		log.Fatal(err)
	}
	target, err := lower.TargetForELF(f)
	if err != nil {
		log.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		log.Fatal(err)
	}
	res, _, err := lower.LowerFile(f, frames, target, lower.Options{})
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	size, err := res.Section.Size()
	if err != nil {
		log.Fatal(err)
	}

	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "direct.so")
	input, err := os.Open(in)
	if err != nil {
		log.Fatal(err)
	}
	defer input.Close()
	var layout elfpatch.Layout
	err = new(elfpatch.TempFiles).ReplaceFile(out, 0o755, func(tmp *os.File) error {
		var err error
		layout, err = elfpatch.PatchLinked(input, tmp, size, func(addr uint64) ([]byte, error) {
			parts, _, err := res.EncodeThenPlace(addr)
			return bytes.Join(parts, nil), err
		})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf(".sframe: %d bytes at %#x\n", layout.Size, layout.Addr)

	g, err := elf.Open(out)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	for _, p := range g.Progs {
		if p.Type == elf.ProgType(0x6474e554) { // PT_GNU_SFRAME
			fmt.Printf("PT_GNU_SFRAME at %#x, %d bytes\n", p.Vaddr, p.Memsz)
		}
	}
	// Output:
	// .sframe: 589 bytes at 0x530
	// PT_GNU_SFRAME at 0x530, 589 bytes
}
