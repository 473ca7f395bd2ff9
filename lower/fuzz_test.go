package lower

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// FuzzLower feeds arbitrary .eh_frame bytes through cfi and Lower for
// each target and mode (sel bit 7: GasCompat): no panic, every kept FDE is
// encodable with its FREs inside the function, and the shortcuts of packed
// lowering (memo, fast path) change nothing (checkShortcuts).
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
		res, err := Lower(frames, target, Options{GasCompat: sel&0x80 != 0})
		if err != nil {
			t.Fatal(err)
		}
		fdes, err := res.Section.Functions()
		if err != nil {
			t.Fatal(err)
		}
		for i, fde := range fdes {
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
		checkShortcuts(t, frames, target, sel&0x80 != 0)
	})
}

// checkShortcuts lowers, packed, the functions of frames followed by
// copies of each with sizes around its own (the memo's cases: a function
// repeating an earlier one's CFI, shorter, as long, longer), with and
// without the memo and the fast path: the sections and skipped functions
// must be the same.
func checkShortcuts(t *testing.T, frames *cfi.Frames, target Target, gas bool) {
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
	var ref []byte
	var refRes *Result
	for k, off := range []struct{ noMemo, noFast bool }{{true, true}, {false, true}, {true, false}, {false, false}} {
		r, err := Lower(&ext, target, Options{GasCompat: gas, noMemo: off.noMemo, noFast: off.noFast})
		if err != nil {
			t.Fatal(err)
		}
		enc, err := r.Section.Encode()
		if err != nil {
			t.Fatalf("Encode (memo %v, fast path %v): %v", !off.noMemo, !off.noFast, err)
		}
		if k == 0 {
			ref, refRes = enc, r
			continue
		}
		if !bytes.Equal(ref, enc) {
			t.Fatalf("the memo (%v) or the fast path (%v) changes the section", !off.noMemo, !off.noFast)
		}
		if len(refRes.Skipped) != len(r.Skipped) {
			t.Fatalf("the memo (%v) or the fast path (%v) changes the skipped functions: %d, %d", !off.noMemo, !off.noFast, len(refRes.Skipped), len(r.Skipped))
		}
		for i := range r.Skipped {
			a, b := refRes.Skipped[i], r.Skipped[i]
			if a.FDE != b.FDE || a.Reason != b.Reason || a.Emitted != b.Emitted {
				t.Fatalf("the memo (%v) or the fast path (%v) changes skipped function %d: %v / %v", !off.noMemo, !off.noFast, i, a.Error(), b.Error())
			}
		}
	}
}

// FuzzScanELF lowers the CFI of arbitrary ELF files (seeded with the
// linked files under testdata) both ways: cfi.Read then LowerFile, and
// cfi.Open then LowerScan on 1 and 3 workers, and cfi.OpenMapped then
// LowerScan on 3 (cut by the file's .eh_frame_hdr, which the fuzzer
// forges too). They must agree (the bytes,
// starts, skipped functions and reasons, entry errors, FDEs read) or fail
// alike, and not panic.
func FuzzScanELF(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/link/*/*.so")
	for i, p := range seeds {
		if i%3 != 0 {
			continue // a few of each ABI is enough
		}
		if d, err := os.ReadFile(p); err == nil && len(d) < 80<<10 {
			f.Add(d, false)
			f.Add(d, true)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, gas bool) {
		ef, err := openELFBytes(data)
		if err != nil {
			return
		}
		tg, err := TargetForELF(ef)
		if err != nil || tg.Relocatable {
			return
		}
		frames, err := cfi.Read(ef, cfi.Auto)
		if err != nil {
			return
		}
		opt := Options{GasCompat: gas}
		_, _, refErr := LowerFile(ef, frames, tg, opt)
		for _, workers := range []int{1, 3, -3} {
			open, err := cfi.Open(ef, cfi.Auto)
			if err != nil {
				t.Fatalf("Read reads the section, Open: %v", err)
			}
			if workers < 0 {
				// From the file's bytes, as mapped: cut by its
				// .eh_frame_hdr (a forged one cut again).
				workers = -workers
				if open, err = cfi.OpenMapped(ef, cfi.Auto, data); err != nil {
					continue
				}
			}
			opt.Workers = workers
			got, _, errs, err := LowerScan(ef, open, tg, opt)
			if (err == nil) != (refErr == nil) {
				t.Fatalf("%d workers: LowerScan error %v, LowerFile %v", workers, err, refErr)
			}
			if err != nil {
				continue
			}
			if fmt.Sprint(errs) != fmt.Sprint(frames.Errors) || got.FDEsRead != len(frames.FDEs) {
				t.Fatalf("%d workers: errors %v, %d FDEs; Read: %v, %d", workers, errs, got.FDEsRead, frames.Errors, len(frames.FDEs))
			}
			again, _, _ := LowerFile(ef, frames, tg, Options{GasCompat: gas})
			if msg := compareScanned(again, got, tg); msg != "" {
				t.Fatalf("%d workers: %s", workers, msg)
			}
		}
	})
}

// openELFBytes parses data with debug/elf, its panics turned into errors
// (they are debug/elf's, not ours).
func openELFBytes(data []byte) (f *elf.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("debug/elf: %v", r)
		}
	}()
	return elf.NewFile(bytes.NewReader(data))
}
