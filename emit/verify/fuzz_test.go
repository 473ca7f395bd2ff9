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

// FuzzSection splices arbitrary .sframe bytes into real files (an object
// and a linked executable): the section decoder and every check run on
// them, the rest of the file (CFI, program headers, relocations) stays
// valid. (FuzzFile mutates whole files; the fuzzing engine stalls in
// debug/elf on some of them.)
func FuzzSection(f *testing.F) {
	bases := [][]byte{}
	for _, p := range []string{
		"../../testdata/gas/x86_64/remember.gs.o",
		"../../testdata/link/x86_64/pie.gs.exe",
	} {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		ef, err := elf.NewFile(bytes.NewReader(raw))
		if err != nil {
			f.Fatal(err)
		}
		s := FindSection(ef)
		f.Add(len(bases) == 1, append([]byte(nil), raw[s.Offset:s.Offset+s.Size]...))
		bases = append(bases, raw)
	}
	f.Fuzz(func(t *testing.T, linked bool, data []byte) {
		base := bases[0]
		if linked {
			base = bases[1]
		}
		raw := append(append([]byte(nil), base...), data...)
		ef, err := elf.NewFile(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		// Point .sframe's section header at the appended bytes.
		shoff := binary.LittleEndian.Uint64(raw[0x28:])
		for i, s := range ef.Sections {
			if s.Name == ".sframe" {
				h := raw[shoff+uint64(i)*64:]
				binary.LittleEndian.PutUint64(h[24:], uint64(len(base)))
				binary.LittleEndian.PutUint64(h[32:], uint64(len(data)))
			}
		}
		ef, err = elf.NewFile(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := File(ef, Options{}); err != nil && len(data) > 0 {
			t.Fatalf("File: %v", err)
		}
	})
}
