package verify

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"
)

// FuzzFile checks arbitrary ELF files: File must return a report or an
// error, never panic or hang.
func FuzzFile(f *testing.F) {
	for _, p := range []string{
		"../../testdata/gas/x86_64/remember.gs.o",
		"../../testdata/gas/s390x/quirks.gs.o",
		"../../testdata/gas/aarch64/quirks.gs.o",
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		r, err := File(ef, Options{})
		if err == nil && r == nil {
			t.Fatal("nil report without error")
		}
	})
}

// FuzzExpr evaluates arbitrary DWARF expressions.
func FuzzExpr(f *testing.F) {
	f.Add([]byte{0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}, uint64(0x103b))
	f.Add([]byte{0x76, 0x78, 0x06}, uint64(0))
	f.Fuzz(func(t *testing.T, expr []byte, pc uint64) {
		for _, cfa := range []bool{false, true} {
			_, _ = evalExpr(expr, binary.LittleEndian, cfa, 16, pc, true)
			_, _ = evalExpr(expr, binary.BigEndian, cfa, -1, pc, false)
		}
	})
}
