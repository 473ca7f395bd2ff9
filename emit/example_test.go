package emit_test

import (
	"debug/elf"
	"fmt"
	"log"
	"strings"

	"github.com/sframe-gen/sframe-gen/emit"
)

// Build a section of one AMD64 function by hand, encode it, decode the
// bytes back and print them as objdump --sframe does.
func Example() {
	sec := &emit.Section{Header: emit.Header{
		Version:          emit.Version3,
		Flags:            emit.FlagFDESorted | emit.FlagFDEFuncStartPCRel,
		ABI:              emit.ABIAMD64LittleEndian,
		CFAFixedRAOffset: -8, // AMD64: the return address is always at CFA-8
	}}
	fde := emit.FDE{
		Size: 0x20,
		Info: emit.FuncInfo(emit.PCInc, emit.FREAddr1, false, false),
		FREs: []emit.FRE{
			// At the entry: CFA = SP+8. After push %rbp: CFA = SP+16,
			// the caller's %rbp at CFA-16.
			{StartAddr: 0, Info: emit.FREInfo(true, 1, emit.DataWord1B, false), Words: []int32{8}},
			{StartAddr: 1, Info: emit.FREInfo(true, 2, emit.DataWord1B, false), Words: []int32{16, -16}},
		},
	}
	if err := sec.AppendFDE(fde); err != nil {
		log.Fatal(err)
	}
	const sectionAddr = 0x2000
	sec.SetFuncStart(0, 0x1000, sectionAddr) // the function starts at 0x1000
	data, err := sec.Encode()
	if err != nil {
		log.Fatal(err)
	}
	back, err := emit.Decode(data)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes\n", len(data))
	var text strings.Builder
	if err := emit.Dump(&text, back, sectionAddr, ".sframe"); err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(text.String(), "\n") {
		fmt.Println(strings.TrimRight(line, " ")) // objdump pads its columns
	}
	// Output:
	// 56 bytes
	// Contents of the SFrame section .sframe:
	//   Header :
	//
	//     Version: SFRAME_VERSION_3
	//     Flags: SFRAME_F_FDE_SORTED,
	//            SFRAME_F_FDE_FUNC_START_PCREL
	//     CFA fixed RA offset: -8
	//     Num FDEs: 1
	//     Num FREs: 2
	//
	//   Function Index :
	//
	//     func idx [0]: pc = 0x1000, size = 32 bytes
	//     STARTPC         CFA       FP        RA
	//     0000000000001000  sp+8      u         f
	//     0000000000001001  sp+16     c-16      f
}

// Look up a PC in the .sframe section of a file, as a stack walker does:
// where is the CFA, where are the return address and the caller's frame
// pointer.
func ExampleReader_Lookup() {
	f, err := elf.Open("../testdata/link/x86_64/direct.gs.so") // linked by GNU ld
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := emit.ReaderFromELF(f)
	if err != nil {
		log.Fatal(err)
	}
	for _, pc := range []uint64{0x1090, 0x10a0, 0x1010, 0x1, 0x1084} {
		l, ok := r.Lookup(pc)
		if !ok {
			fmt.Printf("%#x: no function\n", pc)
			continue
		}
		fmt.Printf("%#x: function at %#x, CFA = %s%+d, RA at CFA%+d", pc, l.Start, emit.RegName(r.Section().Header.ABI, l.CFA.Reg), l.CFA.Offset, l.RA.Offset)
		if l.FP.Kind == emit.LocRule {
			fmt.Printf(", FP at CFA%+d", l.FP.Offset)
		}
		fmt.Println()
	}
	// Output:
	// 0x1090: function at 0x1090, CFA = sp+8, RA at CFA-8
	// 0x10a0: function at 0x1090, CFA = sp+16, RA at CFA-8
	// 0x1010: function at 0x1010, CFA = sp+8, RA at CFA-8
	// 0x1: no function
	// 0x1084: function at 0x1080, CFA = sp+8, RA at CFA-8
}

// A section built function by function (each function's FREs encoded as
// it is appended) reads as the section decoded from its bytes: FDE gives a
// function back with its FREs, ReaderFor looks PCs up in it.
func ExampleSection_FDE() {
	sec := &emit.Section{Header: emit.Header{
		Version:          emit.Version3,
		ABI:              emit.ABIAMD64LittleEndian,
		CFAFixedRAOffset: -8,
	}}
	err := sec.AppendFDE(emit.FDE{
		StartOffset: 0x1000, // from the section start: no FDE_FUNC_START_PCREL
		Size:        0x20,
		Info:        emit.FuncInfo(emit.PCInc, emit.FREAddr1, false, false),
		FREs: []emit.FRE{
			{StartAddr: 0, Info: emit.FREInfo(true, 1, emit.DataWord1B, false), Words: []int32{8}},
			{StartAddr: 1, Info: emit.FREInfo(true, 2, emit.DataWord1B, false), Words: []int32{16, -16}},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	f, err := sec.FDE(0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d FDE, %d bytes of FRE data; FDE 0: size %#x, FREs %v\n", sec.NumFDEs(), len(sec.FREData), f.Size, f.FREs)
	r, err := emit.ReaderFor(sec, 0)
	if err != nil {
		log.Fatal(err)
	}
	l, ok := r.Lookup(0x1004)
	fmt.Println(ok, "CFA = SP +", l.CFA.Offset, "FP at CFA", l.FP.Offset)
	// Output:
	// 1 FDE, 12 bytes of FRE data; FDE 0: size 0x20, FREs [{0 3 [8]} {1 5 [16 -16]}]
	// true CFA = SP + 16 FP at CFA -16
}
