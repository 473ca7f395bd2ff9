package lower

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// pltFDEs returns ld's PLT FDEs exactly: pltWith in GasCompat mode.
func pltFDEs(t Target, variant PLTVariant, secs []PLTSection) ([]PLTFDE, error) {
	return pltWith(t, variant, secs, Options{GasCompat: true})
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodeFREData encodes the FRE sub-section bytes of a list of FDEs.
func encodeFREData(t *testing.T, h emit.Header, fdes []emit.FDE) []byte {
	t.Helper()
	sec, err := emit.NewSection(h, fdes)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b[emit.HeaderSize+emit.FDEIndexEntrySize*len(fdes):]
}

func TestPLTTables(t *testing.T) {
	x86, _ := TargetByName("x86_64")
	s390x, _ := TargetByName("s390x")
	tests := []struct {
		name    string
		target  Target
		variant PLTVariant
		secs    []PLTSection
		starts  []uint64
		sizes   []uint32
		fres    string // FRE sub-section bytes (reference 6.5)
	}{
		{"lazy .plt", x86, PLTLazy, []PLTSection{{PLTMain, 0x1000, 0x20}},
			[]uint64{0x1000, 0x1010}, []uint32{0x10, 0x10},
			"0200 00 00 00  00 03 10  06 03 18   0200 10 00 10  00 03 08  0b 03 10"},
		{"IBT .plt and .plt.sec", x86, PLTLazyIBT, []PLTSection{{PLTSec, 0x1100, 0x20}, {PLTMain, 0x1000, 0x30}},
			[]uint64{0x1000, 0x1010, 0x1100}, []uint32{0x10, 0x20, 0x20},
			"0200 00 00 00  00 03 10  06 03 18   0200 10 00 10  00 03 08  09 03 10   0100 10 00 10  00 03 08"},
		{"PLT0 only, and .plt.got", x86, PLTLazy, []PLTSection{{PLTMain, 0x1000, 0x10}, {PLTGot, 0x1010, 0x20}},
			[]uint64{0x1000, 0x1010}, []uint32{0x10, 0x20},
			"0200 00 00 00  00 03 10  06 03 18   0100 10 00 08  00 03 10"},
		{"non-lazy: no PLT0", x86, PLTNonLazy, []PLTSection{{PLTMain, 0x1000, 0x20}},
			[]uint64{0x1000}, []uint32{0x20},
			"0100 10 00 10  00 03 08"},
		{"empty .plt.sec gets no FDE", x86, PLTLazyIBT, []PLTSection{{PLTSec, 0x1000, 0}},
			nil, nil, ""},
		{"s390x", s390x, 0, []PLTSection{{PLTMain, 0x1000, 0x60}},
			[]uint64{0x1000, 0x1020}, []uint32{0x20, 0x40},
			"0001 00 00 00  00 03 00   0001 10 00 20  00 03 00"},
		{"large .plt uses 2-byte FRE starts", x86, PLTLazy, []PLTSection{{PLTMain, 0x1000, 0x110}},
			[]uint64{0x1000, 0x1010}, []uint32{0x10, 0x100},
			"0200 01 00 00  0000 03 10  0600 03 18   0200 11 00 10  0000 03 08  0b00 03 10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pltFDEs(tc.target, tc.variant, tc.secs)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.starts) {
				t.Fatalf("%d FDEs, want %d", len(got), len(tc.starts))
			}
			var fdes []emit.FDE
			for i, p := range got {
				if p.Start != tc.starts[i] || p.FDE.Size != tc.sizes[i] {
					t.Errorf("FDE %d: start %#x size %#x, want %#x %#x", i, p.Start, p.FDE.Size, tc.starts[i], tc.sizes[i])
				}
				fdes = append(fdes, p.FDE)
			}
			b := encodeFREData(t, tc.target.Header(), fdes)
			if want := unhex(t, tc.fres); !bytes.Equal(b, want) {
				t.Errorf("FRE data\n got % x\nwant % x", b, want)
			}
		})
	}
}

func TestPLTRefused(t *testing.T) {
	a64, _ := TargetByName("aarch64")
	if _, err := pltFDEs(a64, PLTLazy, []PLTSection{{PLTMain, 0, 0x20}}); err == nil {
		t.Error("AArch64 PLT: no error")
	}
	s390x, _ := TargetByName("s390x")
	if _, err := pltFDEs(s390x, 0, []PLTSection{{PLTGot, 0, 0x20}}); err == nil {
		t.Error("s390x .plt.got: no error")
	}
}

// TestLinkedSection rebuilds the whole .sframe of reference 6.5 (ld
// -shared of sframe-foo.s and sframe-bar.s): two functions in insertion
// order, then the lazy PLT, the index sorted by address.
func TestLinkedSection(t *testing.T) {
	x86, _ := TargetByName("x86_64")
	w := func(v ...int32) []int32 { return v }
	user := func(size uint32, last uint32) emit.FDE {
		return emit.FDE{Size: size, FREs: []emit.FRE{
			{StartAddr: 0, Info: 0x03, Words: w(8)},
			{StartAddr: 1, Info: 0x05, Words: w(16, -16)},
			{StartAddr: 4, Info: 0x04, Words: w(16, -16)},
			{StartAddr: last, Info: 0x05, Words: w(8, -16)},
		}}
	}
	res := &Result{Section: &emit.Section{Header: x86.Header()}}
	for _, f := range []emit.FDE{user(0x35, 0x34), user(0x25, 0x24)} {
		if err := res.Section.AppendFDE(f); err != nil {
			t.Fatal(err)
		}
	}
	res.Starts = []uint64{0x1020, 0x1055}
	res.Sources = make([]*cfi.FDE, 2)
	plt, err := pltFDEs(x86, PLTLazy, []PLTSection{{PLTMain, 0x1000, 0x20}})
	if err != nil {
		t.Fatal(err)
	}
	res.appendPLT(plt)
	res.Place(0x2080)
	got, err := res.Section.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		e2de 03 05 03 00 f8 00  04000000 0c000000 3e000000 00000000 40000000
		64efffffffffffff 10000000 28000000
		64efffffffffffff 10000000 33000000
		64efffffffffffff 35000000 00000000
		89efffffffffffff 25000000 14000000
		0400 00 00 00  00 03 08  01 05 10 f0  04 04 10 f0  34 05 08 f0
		0400 00 00 00  00 03 08  01 05 10 f0  04 04 10 f0  24 05 08 f0
		0200 00 00 00  00 03 10  06 03 18
		0200 10 00 10  00 03 08  0b 03 10`)
	if !bytes.Equal(got, want) {
		t.Errorf("section\n got % x\nwant % x", got, want)
	}
	if want := []uint64{0x1000, 0x1010, 0x1020, 0x1055}; !equalU64(res.Starts, want) {
		t.Errorf("starts %#x, want %#x", res.Starts, want)
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPLTGotModes: ld's .plt.got FRE says sp+16 (GasCompat); its entries
// (a bare "jmp *GOT(%rip)" reached by call) and ld's own .eh_frame say
// sp+8, which the default mode writes.
func TestPLTGotModes(t *testing.T) {
	x86, _ := TargetByName("x86_64")
	for _, tc := range []struct {
		opt Options
		cfa int32
	}{{Options{GasCompat: true}, 16}, {Options{}, 8}} {
		for _, v := range []PLTVariant{PLTLazy, PLTLazyIBT, PLTNonLazy, PLTNonLazyIBT} {
			got, err := pltWith(x86, v, []PLTSection{{PLTGot, 0x1000, 0x20}}, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || len(got[0].FDE.FREs) != 1 {
				t.Fatalf("variant %d: %+v", v, got)
			}
			if w := got[0].FDE.FREs[0].Words; len(w) != 1 || w[0] != tc.cfa {
				t.Errorf("variant %d, %+v: .plt.got CFA words %v, want [%d]", v, tc.opt, w, tc.cfa)
			}
		}
	}
}
