package unwind

import (
	"encoding/binary"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// FuzzWalk walks stacks of arbitrary memory and registers through the
// synthetic module of TestWalk, on every ABI: a walk must end, with a
// reason, without panicking.
func FuzzWalk(f *testing.F) {
	f.Add(uint8(0), uint16(0x305), make([]byte, 64))
	f.Add(uint8(1), uint16(0x304), []byte{0x10, 0x12, 0, 0, 0, 0, 0, 0, 0x10, 0x11})
	f.Add(uint8(3), uint16(0x300), []byte{0, 0, 0, 0, 0, 0, 0x90, 0})
	f.Fuzz(func(t *testing.T, which uint8, pcOff uint16, stack []byte) {
		abis := []emit.ABI{emit.ABIAMD64LittleEndian, emit.ABIAArch64LittleEndian, emit.ABIAArch64BigEndian, emit.ABIS390XBigEndian}
		funcs := [][]fn{amd64Funcs(), aarch64Funcs(), aarch64Funcs(), s390xFuncs()}
		k := int(which) % len(abis)
		abi := abis[k]
		m := newMem(abi)
		m.regions[stackBase] = stack
		m.region(0x9000, 0x10)
		m.putBytes(0x9000, aarch64Sigreturn)
		w, err := New(abi, m, []Module{{Name: "prog", Start: modStart, End: modStart + 0x1000, Bias: modStart, SFrame: reader(t, abi, funcs[k]...)}})
		if err != nil {
			t.Fatal(err)
		}
		w.maxFrames = 64
		var r Regs
		r.PC = modStart + uint64(pcOff)%0x1000
		for i := range uint32(NumRegs) {
			r.Set(i, stackBase+uint64(i)*8)
		}
		if len(stack) >= 8 {
			r.Set(30, binary.LittleEndian.Uint64(stack))
			r.Set(14, binary.BigEndian.Uint64(stack))
		}
		frames, end := w.Walk(&r, nil)
		if len(frames) == 0 || len(frames) > w.maxFrames || end.Reason.String() == "" {
			t.Fatalf("%d frames, end %v", len(frames), end)
		}
	})
}
