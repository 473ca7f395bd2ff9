package lower_test

import (
	"debug/elf"
	"fmt"
	"log"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/lower"
)

// Lower one function of a shared library into its SFrame FDE and print
// what each FRE says: where the CFA is and where the return address
// was saved, from the FRE's start on.
func Example() {
	f, err := elf.Open("../testdata/link/x86_64/direct.so")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	target, err := lower.TargetForELF(f) // AMD64, little-endian, linked
	if err != nil {
		log.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		log.Fatal(err)
	}
	l, err := lower.NewLowerer(frames, target, lower.Options{})
	if err != nil {
		log.Fatal(err)
	}
	header := target.Header()
	for _, fn := range frames.FDEs {
		if fn.Start != 0x1090 {
			continue
		}
		fde, skip := l.Function(fn)
		if skip != nil {
			log.Fatal(skip.Reason) // what SFrame cannot say, and why
		}
		fmt.Printf("%s: %d bytes, %d FREs\n", target, fde.Size, len(fde.FREs))
		for _, fre := range fde.FREs[:3] {
			fr, err := header.Frame(&fde, &fre)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("+%#x: CFA = r%d%+d, RA at CFA%+d\n", fre.StartAddr, fr.CFA.Reg, fr.CFA.Offset, fr.RA.Offset)
		}
	}
	// Output:
	// x86_64: 715 bytes, 25 FREs
	// +0x0: CFA = r7+8, RA at CFA-8
	// +0xd: CFA = r7+16, RA at CFA-8
	// +0x12: CFA = r7+24, RA at CFA-8
}

// A function SFrame cannot represent is left out with the reason, as
// sframe-gen -v prints it. This object's functions save the return
// address in a register and mark the stack pointer undefined.
func Example_skipped() {
	f, err := elf.Open("../testdata/gas/x86_64/allrejected.o")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	target, err := lower.TargetForELF(f)
	if err != nil {
		log.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		log.Fatal(err)
	}
	res, err := lower.Lower(frames, target, lower.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d functions kept\n", res.Section.NumFDEs())
	for _, s := range res.Skipped[:2] {
		fmt.Println(s.Reason)
	}
	// Output:
	// 0 functions kept
	// non-default RA register 0
	// SP reg 7 in .cfi_undefined
}
