package unwind_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/unwind"
)

// stack is a thread's stack: 64 bytes at 0x7000.
type stack [64]byte

func (s *stack) ReadAt(p []byte, addr int64) (int, error) {
	if addr < 0x7000 || addr+int64(len(p)) > 0x7000+int64(len(s)) {
		return 0, errors.New("not mapped")
	}
	return copy(p, s[addr-0x7000:]), nil
}

// Walk the stack of a thread stopped in leaf, called from main, called
// from _start, in a module loaded at 0x400000 whose SFrame section is
// built here by hand (a real one comes from emit.ReaderFromELF).
func Example() {
	h := emit.Header{Version: emit.Version3, ABI: emit.ABIAMD64LittleEndian,
		Flags: emit.FlagFDEFuncStartPCRel, CFAFixedRAOffset: -8}
	word := func(start uint32, cfa int32, sp bool, more ...int32) emit.FRE {
		w := append([]int32{cfa}, more...)
		return emit.FRE{StartAddr: start, Info: emit.FREInfo(sp, len(w), emit.DataWord1B, false), Words: w}
	}
	info := emit.FuncInfo(emit.PCInc, emit.FREAddr1, false, false)
	sec, err := emit.NewSection(h, []emit.FDE{
		{Size: 0x10, Info: info, FREs: []emit.FRE{{Info: emit.FREInfo(true, 0, emit.DataWord1B, false)}}},             // _start: outermost
		{Size: 0x20, Info: info, FREs: []emit.FRE{word(0, 8, true), word(1, 16, true, -16), word(4, 16, false, -16)}}, // main
		{Size: 0x10, Info: info, FREs: []emit.FRE{word(0, 8, true)}},                                                  // leaf
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, start := range []uint64{0x1000, 0x1100, 0x1200} {
		sec.SetFuncStart(i, start, 0x2000)
	}
	data, err := sec.Encode()
	if err != nil {
		log.Fatal(err)
	}
	r, err := emit.NewReader(data, 0x2000) // the section's address in the file
	if err != nil {
		log.Fatal(err)
	}

	var mem stack
	binary.LittleEndian.PutUint64(mem[0x00:], 0x401110) // leaf's return address, into main
	binary.LittleEndian.PutUint64(mem[0x10:], 0)        // main's saved %rbp
	binary.LittleEndian.PutUint64(mem[0x18:], 0x401008) // main's return address, into _start
	w, err := unwind.New(emit.ABIAMD64LittleEndian, &mem, []unwind.Module{
		{Name: "prog", Start: 0x400000, End: 0x402000, Bias: 0x400000, SFrame: r},
	})
	if err != nil {
		log.Fatal(err)
	}
	var regs unwind.Regs
	regs.PC = 0x401204
	regs.Set(7, 0x7000) // %rsp
	regs.Set(6, 0x7010) // %rbp
	frames, end := w.Walk(&regs, nil)
	for i, f := range frames {
		fmt.Printf("#%d %#x sp %#x\n", i, f.PC, f.SP)
	}
	fmt.Println(end.Reason)
	// Output:
	// #0 0x401204 sp 0x7000
	// #1 0x401110 sp 0x7008
	// #2 0x401008 sp 0x7020
	// outermost frame
}
