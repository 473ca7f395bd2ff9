package sframegen_test

import (
	"debug/elf"
	"fmt"
	"log"
	"os"
	"path/filepath"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit"
)

// Generate the SFrame section of a shared library without writing
// anything: its bytes, the address they assume, and what was left out.
func ExampleGenerateFile() {
	sec, err := sframegen.GenerateFile("testdata/link/x86_64/direct.so", sframegen.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d bytes for %#x, %d functions, %d left out\n",
		sec.Target, len(sec.Bytes()), sec.Addr, sec.Result().Section.NumFDEs(), len(sec.Omitted()))
	// Output:
	// x86_64: 589 bytes for 0x530, 11 functions, 0 left out
}

// Write the library with its section, as sframe-gen -o does (atomically),
// then read the section back from the new file and look up a PC in it.
func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "direct.so")
	if _, err := sframegen.WriteFile("testdata/link/x86_64/direct.so", out, sframegen.Options{}); err != nil {
		log.Fatal(err)
	}

	f, err := elf.Open(out)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := emit.ReaderFromELF(f)
	if err != nil {
		log.Fatal(err)
	}
	if l, ok := r.Lookup(0x10a0); ok {
		fmt.Printf("%d functions; at 0x10a0: CFA = SP%+d, RA at CFA%+d\n", r.NumFuncs(), l.CFA.Offset, l.RA.Offset)
	}
	// Output:
	// 11 functions; at 0x10a0: CFA = SP+16, RA at CFA-8
}

// A caller that needs every function covered asks for Strict: any
// function left out is then an error that lists them.
func ExampleOptions_strict() {
	_, err := sframegen.GenerateFile("testdata/gas/x86_64/allrejected.o", sframegen.Options{Strict: true})
	fmt.Println(err)
	// Output:
	// testdata/gas/x86_64/allrejected.o: 2 functions and 0 CFI entries could not be represented; the first: function at 0x0: non-default RA register 0
}
