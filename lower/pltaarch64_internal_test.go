package lower

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestAArch64PLTFDEs: the stubs of a .plt are recognized from their
// instructions, immediates masked, and nothing else is: FDEs stop at the
// first bytes that are no template.
func TestAArch64PLTFDEs(t *testing.T) {
	const (
		nop, btiC, autia  = 0xd503201f, 0xd503245f, 0xd503219f
		stp, br           = 0xa9bf7bf0, 0xd61f0220
		adrp, ldr, add    = 0xf00000f0, 0xf947fe11, 0x913fe210 // immediates set
		adrp2, ldr2, add2 = 0x90000110, 0xf9400611, 0x91002210
		stp23, br2        = 0xa9bf0fe2, 0xd61f0040
		adrpX2, adrpX3    = 0x90000002, 0x90000003
		ldrX2, addX3      = 0xf9400042, 0x91000063
		movX30            = 0xaa0003fe
	)
	plt0 := []uint32{stp, adrp, ldr, add, br, nop, nop, nop}
	plt0BTI := []uint32{btiC, stp, adrp, ldr, add, br, nop, nop}
	pltn := []uint32{adrp2, ldr2, add2, br}
	pltnZero := []uint32{adrp2, 0xf9400211, nop, br} // ldr x17, [x16]; the add of 0 as a nop
	pltnBTI := []uint32{btiC, adrp2, ldr2, add2, br, nop}
	pltnPAC := []uint32{adrp2, ldr2, add2, autia, br, nop}
	pltnBoth := []uint32{btiC, adrp2, ldr2, add2, autia, br}
	tlsdesc := []uint32{stp23, adrpX2, adrpX3, ldrX2, addX3, br2, nop, nop}
	cat := func(parts ...[]uint32) []uint32 {
		var out []uint32
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	type fde struct {
		off, size uint64
		pc        emit.PCType
		rep       uint8
		fres      string
	}
	plt0FDE := fde{0, 32, emit.PCInc, 0, "0:sp+0 4:sp+16,ra-8"}
	cases := []struct {
		name string
		code []uint32
		want []fde
	}{
		{"PLT0 and entries", cat(plt0, pltn, pltnZero, pltn), []fde{plt0FDE, {32, 48, emit.PCMask, 16, "0:sp+0"}}},
		{"BTI PLT0, plain entries", cat(plt0BTI, pltn, pltn), []fde{{0, 32, emit.PCInc, 0, "0:sp+0 8:sp+16,ra-8"}, {32, 32, emit.PCMask, 16, "0:sp+0"}}},
		{"BTI entries", cat(plt0BTI, pltnBTI, pltnBTI), []fde{{0, 32, emit.PCInc, 0, "0:sp+0 8:sp+16,ra-8"}, {32, 48, emit.PCMask, 24, "0:sp+0"}}},
		{"PAC entries", cat(plt0, pltnPAC), []fde{plt0FDE, {32, 24, emit.PCMask, 24, "0:sp+0"}}},
		{"BTI and PAC entries", cat(plt0BTI, pltnBoth, pltnBoth), []fde{{0, 32, emit.PCInc, 0, "0:sp+0 8:sp+16,ra-8"}, {32, 48, emit.PCMask, 24, "0:sp+0"}}},
		{"TLSDESC last", cat(plt0, pltn, tlsdesc), []fde{plt0FDE, {32, 16, emit.PCMask, 16, "0:sp+0"}, {48, 32, emit.PCInc, 0, "0:sp+0 4:sp+16"}}},
		{"BTI TLSDESC", cat(plt0BTI, pltn, append([]uint32{btiC}, tlsdesc[:7]...)), []fde{{0, 32, emit.PCInc, 0, "0:sp+0 8:sp+16,ra-8"}, {32, 16, emit.PCMask, 16, "0:sp+0"}, {48, 32, emit.PCInc, 0, "0:sp+0 8:sp+16"}}},
		{"no PLT0", cat(pltn, pltn), []fde{{0, 32, emit.PCMask, 16, "0:sp+0"}}},
		{"entries of two forms", cat(plt0, pltn, pltnBTI), []fde{plt0FDE, {32, 16, emit.PCMask, 16, "0:sp+0"}, {48, 24, emit.PCMask, 24, "0:sp+0"}}},
		{"unknown bytes stop it", cat(plt0, pltn, []uint32{movX30, br}, pltn), []fde{plt0FDE, {32, 16, emit.PCMask, 16, "0:sp+0"}}},
		{"an entry writing x30 is no entry", cat(plt0, []uint32{adrp2, ldr2, movX30, br}), []fde{plt0FDE}},
		{"PLT0 cut short", plt0[:7], nil},
		{"empty", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code := make([]byte, 4*len(tc.code))
			for i, w := range tc.code {
				binary.LittleEndian.PutUint32(code[4*i:], w)
			}
			got := aarch64PLTFDEs(code, 0x1000)
			if len(got) != len(tc.want) {
				t.Fatalf("%d FDEs %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				var fres string
				for j, e := range g.FDE.FREs {
					if j > 0 {
						fres += " "
					}
					fres += fmt.Sprintf("%d:sp+%d", e.StartAddr, e.Words[0])
					if len(e.Words) > 1 {
						fres += fmt.Sprintf(",ra%d", e.Words[1])
					}
					if !e.BaseRegSP() {
						fres += "(not sp)"
					}
				}
				if g.Start != 0x1000+w.off || uint64(g.FDE.Size) != w.size || g.FDE.PCType() != w.pc || g.FDE.RepSize != w.rep || fres != w.fres {
					t.Errorf("FDE %d: at %#x size %d %v rep %d FREs %q, want at %#x size %d %v rep %d FREs %q",
						i, g.Start, g.FDE.Size, g.FDE.PCType(), g.FDE.RepSize, fres, 0x1000+w.off, w.size, w.pc, w.rep, w.fres)
				}
			}
		})
	}
}
