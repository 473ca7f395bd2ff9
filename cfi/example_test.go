package cfi_test

import (
	"debug/elf"
	"fmt"
	"log"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// Read the CFI of a shared library and print the row table of one of its
// functions: at each address, how to compute the CFA and where the
// registers of the caller were saved (x86-64: register 7 is %rsp, 16 the
// return address, 3 %rbx, 6 %rbp, 12-15 %r12-%r15).
func Example() {
	f, err := elf.Open("../testdata/link/x86_64/direct.so")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	frames, err := cfi.Read(f, cfi.Auto) // .eh_frame, or .debug_frame without it
	if err != nil {
		log.Fatal(err)
	}
	for _, fde := range frames.FDEs {
		if fde.Start != 0x1090 {
			continue
		}
		rows := frames.Rows(fde)
		for i := 0; i < 4; i++ {
			row, err := rows.Next()
			if err != nil || row == nil {
				break
			}
			fmt.Printf("%#x-%#x: CFA = r%d%+d", row.PC, row.End, row.CFA.Reg, row.CFA.Offset)
			for _, r := range row.Regs {
				if r.Rule.Kind == cfi.RuleOffset {
					fmt.Printf(", r%d at CFA%+d", r.Column, r.Rule.Offset)
				}
			}
			fmt.Println()
		}
	}
	// Output:
	// 0x1090-0x109d: CFA = r7+8, r16 at CFA-8
	// 0x109d-0x10a2: CFA = r7+16, r15 at CFA-16, r16 at CFA-8
	// 0x10a2-0x10aa: CFA = r7+24, r14 at CFA-24, r15 at CFA-16, r16 at CFA-8
	// 0x10aa-0x10b3: CFA = r7+32, r13 at CFA-32, r14 at CFA-24, r15 at CFA-16, r16 at CFA-8
}
