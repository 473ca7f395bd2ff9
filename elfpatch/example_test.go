package elfpatch_test

import (
	"bytes"
	"debug/elf"
	"errors"
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
// .sframe and a PT_GNU_SFRAME segment; the input is not changed. (To
// replace a file atomically, write through replace.TempFiles.ReplaceFile,
// as sframegen does.)
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
	output, err := os.Create(out)
	if err != nil {
		log.Fatal(err)
	}
	layout, err := elfpatch.PatchLinked(input, output, size, func(addr uint64) ([]byte, error) {
		parts, _, err := res.EncodeThenPlace(addr)
		return bytes.Join(parts, nil), err
	})
	if err := errors.Join(err, output.Close()); err != nil {
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
