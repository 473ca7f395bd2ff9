package lower

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// FuzzLower feeds arbitrary .eh_frame bytes through cfi and LowerWith for
// each target and mode (sel bit 7: GasCompat): no panic, every kept FDE is
// encodable with its FREs inside the function, and the memo of packed
// lowering changes nothing (checkMemo).
func FuzzLower(f *testing.F) {
	objs, _ := filepath.Glob("../testdata/gas/*/*.o")
	for _, o := range objs {
		ef, err := elf.Open(o)
		if err != nil {
			continue
		}
		if s := ef.Section(".eh_frame"); s != nil {
			if data, err := s.Data(); err == nil && len(data) < 1<<14 {
				f.Add(data, uint8(0))
				f.Add(data, uint8(0x80))
			}
		}
		ef.Close()
	}
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		targets := []Target{{Arch: AMD64}, {Arch: AArch64}, {Arch: AArch64, BigEndian: true}, {Arch: S390X, BigEndian: true}}
		target := targets[int(sel&0x7f)%len(targets)]
		var order binary.ByteOrder = binary.LittleEndian
		if target.BigEndian {
			order = binary.BigEndian
		}
		frames, err := cfi.ReadSection(data, cfi.EHFrame, cfi.PointerContext{Order: order, AddrSize: 8})
		if err != nil {
			return
		}
		res, err := LowerWith(frames, target, Options{GasCompat: sel&0x80 != 0})
		if err != nil {
			t.Fatal(err)
		}
		for i, fde := range res.Section.FDEs {
			if len(fde.FREs) > emit.MaxFREsPerFDE {
				t.Fatalf("FDE %d: %d FREs", i, len(fde.FREs))
			}
			for _, e := range fde.FREs {
				if uint64(e.StartAddr) > uint64(fde.Size) {
					t.Fatalf("FDE %d: FRE at %#x past size %#x", i, e.StartAddr, fde.Size)
				}
				if len(e.Words) > emit.MaxDataWords {
					t.Fatalf("FDE %d: %d data words", i, len(e.Words))
				}
			}
		}
		if _, err := res.Section.Encode(); err != nil {
			t.Fatalf("Encode: %v", err)
		}
		checkMemo(t, frames, target, sel&0x80 != 0)
	})
}

// checkMemo lowers, packed, the functions of frames followed by copies of
// each with sizes around its own (the memo's cases: a function repeating
// an earlier one's CFI, shorter, as long, longer), with and without the
// memo: the sections and skipped functions must be the same.
func checkMemo(t *testing.T, frames *cfi.Frames, target Target, gas bool) {
	if len(frames.FDEs) > 256 {
		return
	}
	ext := *frames
	ext.FDEs = slices.Clone(frames.FDEs)
	for _, f := range frames.FDEs {
		for _, d := range []int64{0, -1, 1, 64} {
			g := *f
			g.Size = uint64(int64(f.Size) + d)
			ext.FDEs = append(ext.FDEs, &g)
		}
	}
	var enc [2][]byte
	var res [2]*Result
	for k, noMemo := range []bool{true, false} {
		r, err := LowerWith(&ext, target, Options{GasCompat: gas, Pack: true, noMemo: noMemo})
		if err != nil {
			t.Fatal(err)
		}
		if enc[k], err = r.Section.Encode(); err != nil {
			t.Fatalf("Encode (memo %v): %v", !noMemo, err)
		}
		res[k] = r
	}
	if !bytes.Equal(enc[0], enc[1]) {
		t.Fatalf("the memo changes the section")
	}
	if len(res[0].Skipped) != len(res[1].Skipped) {
		t.Fatalf("the memo changes the skipped functions: %d, %d", len(res[0].Skipped), len(res[1].Skipped))
	}
	for i := range res[0].Skipped {
		a, b := res[0].Skipped[i], res[1].Skipped[i]
		if a.FDE != b.FDE || a.Reason != b.Reason || a.Emitted != b.Emitted {
			t.Fatalf("the memo changes skipped function %d: %v / %v", i, a.Error(), b.Error())
		}
	}
}
