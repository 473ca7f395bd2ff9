package verify

import (
	"encoding/binary"
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
