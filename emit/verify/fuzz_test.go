package verify

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
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

// FuzzExpr evaluates arbitrary DWARF expressions and checks each answer
// against the reference evaluator of exprref_test.go: a malformed
// expression is an error, one within the symbolic form has the value the
// reference computes, and the same call gives the same answer twice. It
// runs in both byte orders, as a CFA rule and as a register rule (the CFA
// pushed first), with the PC register known, unknown, and absent.
func FuzzExpr(f *testing.F) {
	f.Add([]byte{0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}, uint64(0x103b), uint64(0x7ffc0000))
	f.Add([]byte{0x76, 0x78, 0x06}, uint64(0), uint64(0))
	f.Add([]byte{0x10, 16, 0x1c}, uint64(0), uint64(0x7ffc1000))
	f.Add([]byte{0x0b, 0xf0, 0xff, 0x92, 10, 0x10, 0x22, 0x23, 0x20, 0x06}, uint64(0x1000), uint64(0))
	f.Add([]byte{0x0f, 1, 2, 3, 4, 5, 6, 7, 0x80, 0x34, 0x26}, uint64(0), uint64(0))
	f.Add([]byte{0x31, 0x32, 0x33, 0x14, 0x16, 0x13, 0x1c, 0x22}, uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, expr []byte, pc, cfa uint64) {
		machines := []refMachine{
			{order: binary.LittleEndian, pcReg: 16, pc: pc, hasPC: true, cfa: cfa},
			{order: binary.LittleEndian, pcReg: 16, cfa: cfa},
			{order: binary.BigEndian, pcReg: -1, pc: pc, cfa: cfa},
		}
		for i := range machines {
			m := &machines[i]
			for _, pushCFA := range []bool{false, true} {
				v, err := evalExpr(expr, m.order, pushCFA, m.pcReg, m.pc, m.hasPC)
				if msg := checkAgainstReference(expr, m, pushCFA, v, err); msg != "" {
					t.Fatalf("%x (%v, PC register %d, PC known %v, CFA pushed %v): %s", expr, m.order, m.pcReg, m.hasPC, pushCFA, msg)
				}
				v2, err2 := evalExpr(expr, m.order, pushCFA, m.pcReg, m.pc, m.hasPC)
				if v2 != v || fmt.Sprint(err2) != fmt.Sprint(err) {
					t.Fatalf("%x: %+v, %v the first time, %+v, %v the second", expr, v, err, v2, err2)
				}
			}
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
		s := emit.FindSection(ef)
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
