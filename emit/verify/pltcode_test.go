package verify

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestPLTBoundary: a PLT CFA expression whose value changes inside the
// instruction after a .plt entry's push is read at that instruction's
// start (the push has run there), and only then.
func TestPLTBoundary(t *testing.T) {
	// endbr64; push $0; bnd jmp rel32; nop (ld 2.29-2.3x, IBT+BND)
	bndIBT := []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0xf2, 0xe9, 0, 0, 0, 0, 0x90}
	// endbr64; push $0; jmp rel32; xchg %ax,%ax (IBT)
	ibt := []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0, 0x66, 0x90}
	// jmp *disp32(%rip); push $0; jmp rel32 (no IBT)
	lazy := []byte{0xff, 0x25, 0, 0, 0, 0, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0}
	// endbr64; push GOT+8(%rip); jmp *GOT(%rip) (the TLSDESC entry)
	tlsdesc := []byte{0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x35, 0, 0, 0, 0, 0xff, 0x25, 0, 0, 0, 0}
	// An entry of bytes ld does not write.
	odd := []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0x48, 0x89, 0xe5, 0, 0, 0, 0}
	// rsp+8 + ((rip&15) >= n) << 3, as GNU ld writes it.
	expr := func(n byte) []byte {
		return []byte{0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x30 + n, 0x2a, 0x33, 0x24, 0x22}
	}
	cases := []struct {
		name      string
		entry     []byte
		n, off    byte
		wantOff   int64
		corrected bool
	}{
		{"IBT+BND lit10 at the bnd jmp", bndIBT, 10, 9, 16, true},
		{"IBT+BND lit10 inside the bnd jmp", bndIBT, 10, 11, 16, false},
		{"IBT+BND lit10 at the push", bndIBT, 10, 4, 8, false},
		{"IBT+BND lit9", bndIBT, 9, 9, 16, false},
		{"IBT lit9", ibt, 9, 9, 16, false},
		{"IBT lit10", ibt, 10, 9, 16, true},
		{"IBT lit12: two values inside the jmp", ibt, 12, 9, 8, false},
		{"lazy lit11", lazy, 11, 11, 16, false},
		{"lazy lit12", lazy, 12, 11, 16, true},
		{"lazy lit8: change inside the push", lazy, 8, 6, 8, false},
		{"bytes ld does not write", odd, 10, 9, 8, false},
		{"TLSDESC entry lit11: not the index push", tlsdesc, 11, 10, 8, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plt := append(make([]byte, 16), tc.entry...) // PLT0, then the entry
			c := &checker{s: &emit.Section{Header: emit.Header{ABI: emit.ABIAMD64LittleEndian}},
				plt: pltCode{read: true, addr: 0x1000, data: plt}}
			side := &cfiSide{regs: regsFor(emit.ABIAMD64LittleEndian), order: binary.LittleEndian}
			l, corrected := c.cfaAtBoundary(side, expr(tc.n), 0x1010+uint64(tc.off))
			if l.kind != locRule || l.reg != 7 || l.off != tc.wantOff || corrected != tc.corrected {
				t.Errorf("CFA %+v corrected %v, want rsp+%d corrected %v", l, corrected, tc.wantOff, tc.corrected)
			}
		})
	}
}

// TestA64PLTCode: the reading of AArch64 .plt code gives, at each
// instruction of ld's stubs, the frame the code has there, and refuses
// what it cannot follow.
func TestA64PLTCode(t *testing.T) {
	const (
		nop       = 0xd503201f
		btiC      = 0xd503245f
		autia1716 = 0xd503219f
		stpX16X30 = 0xa9bf7bf0 // stp x16, x30, [sp, #-16]!
		adrpX16   = 0xf00000f0 // adrp x16, ...
		ldrX17    = 0xf947fe11 // ldr x17, [x16, #4088]
		addX16    = 0x913fe210 // add x16, x16, #0xff8
		brX17     = 0xd61f0220
		stpX2X3   = 0xa9bf0fe2 // stp x2, x3, [sp, #-16]!
		adrpX2    = 0x90000002
		adrpX3    = 0x90000003
		ldrX2     = 0xf9400042
		addX3     = 0x91000063
		brX2      = 0xd61f0040
		stpX29X30 = 0xa9be7bfd // stp x29, x30, [sp, #-32]!
		subSP     = 0xd10083ff // sub sp, sp, #0x20
		movX30    = 0xaa0003fe // mov x30, x0
		ldrX30    = 0xf940021e // ldr x30, [x16]
		addSPX16  = 0x9100021f // add sp, x16, #0
	)
	entry := a64State{}
	plt0Saved := a64State{cfa: 16, raSaved: true, raOff: -8}
	tls := a64State{cfa: 16}
	unreach := a64State{kind: a64Unreachable}
	frame := a64State{cfa: 32, raSaved: true, raOff: -24, fpSaved: true, fpOff: -32}
	cases := []struct {
		name  string
		code  []uint32
		wants []a64State
	}{
		{"PLT0, PLTn", []uint32{stpX16X30, adrpX16, ldrX17, addX16, brX17, nop, nop, nop, adrpX16, ldrX17, nop, brX17},
			[]a64State{entry, plt0Saved, plt0Saved, plt0Saved, plt0Saved, unreach, unreach, unreach, entry, entry, entry, entry}},
		{"BTI PLT0, BTI and PAC PLTn", []uint32{btiC, stpX16X30, adrpX16, ldrX17, addX16, brX17, nop, nop, btiC, adrpX16, ldrX17, addX16, autia1716, brX17},
			[]a64State{entry, entry, plt0Saved, plt0Saved, plt0Saved, plt0Saved, unreach, unreach, entry, entry, entry, entry, entry, entry}},
		{"PAC PLTn", []uint32{adrpX16, ldrX17, addX16, autia1716, brX17, nop, adrpX16},
			[]a64State{entry, entry, entry, entry, entry, unreach, entry}},
		{"TLSDESC", []uint32{stpX2X3, adrpX2, adrpX3, ldrX2, addX3, brX2, nop, nop},
			[]a64State{entry, tls, tls, tls, tls, tls, unreach, unreach}},
		{"a frame record and sub sp", []uint32{stpX29X30, subSP, brX17},
			[]a64State{entry, frame, {cfa: 64, raSaved: true, raOff: -24, fpSaved: true, fpOff: -32}}},
		{"x30 written", []uint32{movX30, adrpX16, brX17, adrpX16},
			[]a64State{entry, {kind: a64Unknown, word: movX30}, {kind: a64Unknown, word: movX30}, entry}},
		{"x30 loaded", []uint32{ldrX30, brX17},
			[]a64State{entry, {kind: a64Unknown, word: ldrX30}}},
		{"sp from another register", []uint32{addSPX16, brX17},
			[]a64State{entry, {kind: a64Unknown, word: addSPX16}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code := make([]byte, 4*len(tc.code))
			for i, w := range tc.code {
				binary.LittleEndian.PutUint32(code[4*i:], w)
			}
			got := readA64PLT(code)
			for i := range tc.wants {
				if got[i] != tc.wants[i] {
					t.Errorf("instruction %d (%08x): %+v, want %+v", i, tc.code[i], got[i], tc.wants[i])
				}
			}
		})
	}
}

// TestCompareA64PLT: SFrame for AArch64 .plt code is compared with what
// the instructions do, in either byte order (the code is little-endian in
// both), and a wrong FRE is a mismatch.
func TestCompareA64PLT(t *testing.T) {
	// PLT0: stp x16, x30, [sp, #-16]!; adrp; ldr; add; br x17; nop x3
	plt0 := []uint32{0xa9bf7bf0, 0xf00000f0, 0xf947fe11, 0x913fe210, 0xd61f0220, 0xd503201f, 0xd503201f, 0xd503201f}
	code := make([]byte, 4*len(plt0))
	for i, w := range plt0 {
		binary.LittleEndian.PutUint32(code[4*i:], w)
	}
	sp := func(off int64) loc { return loc{kind: locRule, regP: true, reg: 31, off: off} }
	entry := frame{cfa: sp(0)}
	saved := frame{cfa: sp(16), ra: loc{kind: locRule, off: -8, deref: true}}
	cases := []struct {
		name     string
		sf       frame
		lo, hi   uint64
		mismatch bool
	}{
		{"entry", entry, 0x1000, 0x1004, false},
		{"after the stp", saved, 0x1004, 0x1014, false},
		{"after the stp, RA said in x30", frame{cfa: sp(16)}, 0x1004, 0x1014, true},
		{"after the stp, CFA sp+8", frame{cfa: sp(8), ra: saved.ra}, 0x1004, 0x1014, true},
		{"the stp said done at its own address", saved, 0x1000, 0x1004, true},
		{"padding: not compared", entry, 0x1014, 0x1020, false},
	}
	for _, abi := range []emit.ABI{emit.ABIAArch64LittleEndian, emit.ABIAArch64BigEndian} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%v %s", abi, tc.name), func(t *testing.T) {
				c := &checker{s: &emit.Section{Header: emit.Header{ABI: abi}},
					plt: pltCode{read: true, addr: 0x1000, a64: readA64PLT(code)}}
				var w walker
				c.compareA64PLT(&w, tc.sf, false, tc.lo, tc.hi)
				var got bool
				for _, f := range w.acc {
					if f.Kind == KindMismatch {
						got = true
					}
				}
				if got != tc.mismatch {
					t.Errorf("findings %+v, want a mismatch: %v", w.acc, tc.mismatch)
				}
			})
		}
	}
}
