package lower

import (
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// FuzzLower feeds arbitrary .eh_frame bytes through cfi and LowerWith for
// each target and mode (sel bit 7: GasCompat): no panic, and every kept FDE is encodable with its FREs inside
// the function.
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
	})
}
