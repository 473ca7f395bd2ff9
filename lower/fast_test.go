package lower

import (
	"bytes"
	"encoding/binary"

	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// TestFastOperands checks the fast path on every operand form it decodes
// (the unsigned and signed, factored and unfactored offsets of
// offset_extended, def_cfa and def_cfa_offset, the advances of each size,
// restore_extended, operands padded to more LEB128 bytes than they need)
// and zero advances (whose row replaces the last one, at the end of a
// function too), for FP and RA on each ABI: it must take every one of
// these functions and give the translator's bytes. Compilers rarely write
// these forms for FP and RA, so the testdata files and the fuzz corpus
// hardly reach them.
func TestFastOperands(t *testing.T) {
	abis := []struct {
		target     Target
		sp, fp, ra byte
		initial    []byte // the CIE's initial instructions
	}{
		{Target{Arch: AMD64}, 7, 6, 16, []byte{0x0c, 7, 8, 0x90, 1}},
		// AArch64 refuses FP saved without RA: RA is saved from the start.
		{Target{Arch: AArch64}, 31, 29, 30, []byte{0x0c, 31, 16, 0x9e, 2}},
		{Target{Arch: AArch64, BigEndian: true}, 31, 29, 30, []byte{0x0c, 31, 16, 0x9e, 2}},
		{Target{Arch: S390X, BigEndian: true}, 15, 11, 14, []byte{0x0c, 15, 0xa0, 0x01}},
	}
	for _, abi := range abis {
		sp, fp, ra := abi.sp, abi.fp, abi.ra
		cases := [][]byte{
			{0x05, fp, 0x02},                   // offset_extended fp, 2*da
			{0x11, fp, 0x7e},                   // offset_extended_sf fp, -2*da
			{0x0c, sp, 0x88, 0x01},             // def_cfa sp, 136 (two-byte ULEB)
			{0x12, sp, 0x7c},                   // def_cfa_sf sp, -4*da
			{0x0e, 0xa8, 0x01},                 // def_cfa_offset 168
			{0x13, 0x7a},                       // def_cfa_offset_sf -6*da
			{0x0c, fp, 0xb0, 0x01},             // def_cfa fp, 176
			{0x0d, fp},                         // def_cfa_register fp
			{0x02, 0x03, 0x0e, 0xb8, 0x01},     // advance_loc1 3; def_cfa_offset 184
			{0x05, fp, 0x02, 0x42, 0x06, fp},   // offset_extended fp; advance 2; restore_extended fp
			{0x80 | fp, 0x02, 0x42, 0xc0 | fp}, // offset fp; advance 2; restore fp
			// remember_state; def_cfa_offset 32; advance 1; restore_state
			{0x0a, 0x0e, 0x20, 0x41, 0x0b},
			// Operands in more LEB128 bytes than their value needs (all
			// decoders take them): def_cfa_offset 16 in 6 bytes, offset fp
			// 2*da in 6, offset_extended fp 3*da in 7, def_cfa_register fp
			// in 3.
			{0x0e, 0x90, 0x80, 0x80, 0x80, 0x80, 0x00},
			{0x80 | fp, 0x82, 0x80, 0x80, 0x80, 0x80, 0x00},
			{0x05, fp, 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00},
			{0x0d, 0x80 | fp, 0x80, 0x00},
		}
		if abi.target.Arch != AMD64 {
			cases = append(cases,
				[]byte{0x05, ra, 0x03, 0x05, fp, 0x04},           // offset_extended ra, fp
				[]byte{0x11, ra, 0x7d, 0x11, fp, 0x7c},           // offset_extended_sf ra, fp
				[]byte{0x05, ra, 0x01, 0x42, 0x06, ra, 0x08, ra}, // restore_extended ra; same_value ra
				[]byte{0x05, ra, 0x01, 0x42, 0xc0 | ra},          // offset_extended ra; advance 2; restore ra
			)
		}
		var order appendOrder = binary.LittleEndian
		if abi.target.BigEndian {
			order = binary.BigEndian
		}
		// Each case, then an advance, then the two- and four-byte advances.
		var fdes [][]byte
		for _, c := range cases {
			ins := append(append([]byte{}, c...), 0x44)
			ins = order.AppendUint16(append(ins, 0x03), 2)
			ins = append(ins, 0x0e, 0xc0, 0x01) // def_cfa_offset 192
			ins = order.AppendUint32(append(ins, 0x04), 3)
			fdes = append(fdes, ins)
		}
		// Zero advances, as they are (no advance after them).
		fdes = append(fdes,
			[]byte{0x0e, 0x10, 0x41, 0x0e, 0x18, 0x40, 0x0e, 0x20}, // ...; advance 0; def_cfa_offset 32
			[]byte{0x41, 0x0e, 0x10, 0x40},                         // advance 1; def_cfa_offset 16; advance 0
			[]byte{0x40, 0x0e, 0x10, 0x41, 0x0e, 0x18, 0x40},       // advance 0 first and last
			[]byte{0x41, 0x0e, 0x10, 0x40, 0x0e, 0x18, 0x41, 0x0e, 0x20},
		)
		data := ehFrame(order, ra, abi.initial, fdes, 64)
		frames, err := cfi.ReadSection(data, cfi.EHFrame, cfi.PointerContext{Order: order, AddrSize: 8})
		if err != nil || len(frames.Errors) != 0 || len(frames.FDEs) != len(fdes) {
			t.Fatalf("%v: the test's .eh_frame: %v %v, %d FDEs", abi.target, err, frames.Errors, len(frames.FDEs))
		}
		var enc [2][]byte
		for k, noFast := range []bool{true, false} {
			r, err := Lower(frames, abi.target, Options{noMemo: true, noFast: noFast})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Skipped) != 0 {
				t.Fatalf("%v: skipped %v", abi.target, r.Skipped[0].Error())
			}
			if !noFast && r.fast != len(fdes) {
				t.Errorf("%v: %d of %d functions on the fast path", abi.target, r.fast, len(fdes))
			}
			if enc[k], err = r.Section.Encode(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(enc[0], enc[1]) {
			t.Errorf("%v: the fast path's section differs from the translator's", abi.target)
		}
	}
}

// ehFrame builds an .eh_frame section: one CIE (code alignment 1, data
// alignment -8, return address column ra, FDE pointers pcrel sdata4, the
// given initial instructions), then one FDE per instruction list, each
// describing size bytes of code.
func ehFrame(order appendOrder, ra byte, initial []byte, fdes [][]byte, size uint32) []byte {
	entry := func(b []byte, body []byte) []byte {
		for len(body)%4 != 0 {
			body = append(body, 0) // DW_CFA_nop
		}
		return append(order.AppendUint32(b, uint32(len(body))), body...)
	}
	cie := append([]byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, ra, 1, 0x1b}, initial...)
	b := entry(nil, cie)
	for i, ins := range fdes {
		off := len(b)
		body := order.AppendUint32(nil, uint32(off+4)) // CIE pointer: back to offset 0
		body = order.AppendUint32(body, uint32(0x1000*(i+1)))
		body = order.AppendUint32(body, size)
		body = append(append(body, 0), ins...)
		b = entry(b, body)
	}
	return b
}

// appendOrder is what binary.LittleEndian and BigEndian both are.
type appendOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// TestFastManyFREs checks a function of more FREs than an SFrame FDE
// holds on each ABI: the fast path gives it to the translator, which
// decides alone what becomes of it (the same section with the fast path
// and without, and no error).
func TestFastManyFREs(t *testing.T) {
	for _, abi := range []struct {
		target  Target
		ra      byte
		initial []byte
		offsets [2][]byte // two CFA offsets (ULEB128) whose FREs take one-byte words
	}{
		{Target{Arch: AMD64}, 16, []byte{0x0c, 7, 8, 0x90, 1}, [2][]byte{{16}, {24}}},
		{Target{Arch: AArch64}, 30, []byte{0x0c, 31, 16, 0x9e, 2}, [2][]byte{{16}, {32}}},
		{Target{Arch: S390X, BigEndian: true}, 14, []byte{0x0c, 15, 0xa0, 0x01}, [2][]byte{{0xa8, 0x01}, {0xb0, 0x01}}},
	} {
		var order appendOrder = binary.LittleEndian
		if abi.target.BigEndian {
			order = binary.BigEndian
		}
		// maxFREs+2 rows: advance 1, then the CFA offset the row
		// before did not have.
		var ins []byte
		for i := range maxFREs + 2 {
			ins = append(append(ins, 0x41, 0x0e), abi.offsets[i%2]...)
		}
		data := ehFrame(order, abi.ra, abi.initial, [][]byte{ins}, maxFREs+8)
		frames, err := cfi.ReadSection(data, cfi.EHFrame, cfi.PointerContext{Order: order, AddrSize: 8})
		if err != nil || len(frames.Errors) != 0 || len(frames.FDEs) != 1 {
			t.Fatalf("%v: the test's .eh_frame: %v %v", abi.target, err, frames.Errors)
		}
		var enc [2][]byte
		for k, noFast := range []bool{true, false} {
			r, err := Lower(frames, abi.target, Options{noMemo: true, noFast: noFast})
			if err != nil {
				t.Fatalf("%v (fast path off: %v): %v", abi.target, noFast, err)
			}
			if r.fast != 0 {
				t.Errorf("%v: the fast path took a function of %d FREs", abi.target, maxFREs+2)
			}
			if enc[k], err = r.Section.Encode(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(enc[0], enc[1]) {
			t.Errorf("%v: the fast path's section differs from the translator's", abi.target)
		}
	}
}
