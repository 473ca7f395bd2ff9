package lower

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestScanLower checks that LowerScan, which reads and lowers each FDE in
// turn, gives LowerFile's result for cfi.Read's Frames: the same bytes,
// starts, relocations, skipped functions (with their FDEs and reasons),
// entry errors, PLT sections and count of FDEs read, on every file under
// testdata, libc, libstdc++ and the AArch64 and s390x sanitizer runtimes
// (and LLVM where it is), in both modes, packed or not, on 1 to 3
// workers.
func TestScanLower(t *testing.T) {
	libc, libstdcxx := hostLibs(t)
	files := append(testdataELFs(t), libc, libstdcxx,
		sysfiles.CompilerLib(t, "aarch64-linux-gnu-gcc", "libasan.so.8"), sysfiles.CompilerLib(t, "s390x-linux-gnu-gcc", "libasan.so.8"))
	if llvm := sysfiles.BigLib(t); llvm != "" && !testing.Short() {
		files = append(files, llvm)
	}
	// And libstdc++ with broken FDEs all along its .eh_frame, for the
	// entry errors of each part.
	files = append(files, brokenFDEs(t, libstdcxx, 7))
	n, broken := 0, false
	for _, name := range files {
		f, tg, frames, ok := openLowerable(name)
		if !ok {
			if _, err := os.Stat(name); err != nil {
				t.Errorf("%v", err)
			}
			continue // no CFI
		}
		broken = broken || len(frames.Errors) > 100
		for _, gas := range []bool{false, true} {
			{
				for _, workers := range []int{1, 2, 3} {
					opt := Options{GasCompat: gas, Workers: workers}
					what := fmt.Sprintf("%s (gas-compat %v, %d workers)", name, gas, workers)
					ref, refPLT, err := LowerFile(f, frames, tg, opt)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					open, err := cfi.Open(f, cfi.Auto)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					got, plt, errs, err := LowerScan(f, open, tg, opt)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if msg := compareScanned(ref, got, tg); msg != "" {
						t.Errorf("%s: %s", what, msg)
					}
					if !slices.Equal(plt, refPLT) || fmt.Sprint(errs) != fmt.Sprint(frames.Errors) || got.FDEsRead != len(frames.FDEs) {
						t.Errorf("%s: PLT %v, errors %v, %d FDEs read; LowerFile: %v, %v, %d", what, plt, errs, got.FDEsRead, refPLT, frames.Errors, len(frames.FDEs))
					}
				}
			}
		}
		f.Close()
		n++
	}
	if n < 24 || !broken {
		t.Fatalf("only %d files lowered, broken FDEs: %v", n, broken)
	}
}

// brokenFDEs writes a copy of the linked file name in which the CIE
// pointer of every k-th FDE of .eh_frame points before the section and
// the code of every k-th plus one runs past the executable segments, and
// returns its path.
func brokenFDEs(t *testing.T, name string, k int) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".eh_frame")
	if s == nil || f.ByteOrder != binary.LittleEndian {
		t.Fatalf("%s: no little-endian .eh_frame", name)
	}
	sec := data[s.Offset : s.Offset+s.Size]
	for off, i := 0, 0; off+8 <= len(sec); i++ {
		n32 := binary.LittleEndian.Uint32(sec[off:])
		if n32 == 0 || n32 == 0xffffffff {
			break
		}
		n := int(n32)
		if binary.LittleEndian.Uint32(sec[off+4:]) != 0 {
			switch i % k {
			case 0:
				binary.LittleEndian.PutUint32(sec[off+4:], 0xfffffff0)
			case 1:
				// The address range (pcrel sdata4 pointers) runs out of
				// the code: skipped, not broken.
				binary.LittleEndian.PutUint32(sec[off+12:], 0x7fffffff)
			}
		}
		off += 4 + n
	}
	out := filepath.Join(t.TempDir(), "broken.so")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// compareScanned says how LowerScan's result got differs from LowerFile's
// ref (its Sources aside), or returns "".
func compareScanned(ref, got *Result, tg Target) string {
	if got.Sources != nil {
		return "LowerScan gave Sources"
	}
	// EncodeThenPlace first (from the parts' sorted runs, when lowered in
	// parts), which leaves the result as it was.
	var placed []byte
	if !tg.Relocatable {
		parts, _, err := got.EncodeThenPlace(0x10000)
		if err != nil {
			return fmt.Sprintf("EncodeThenPlace: %v", err)
		}
		placed = bytes.Join(parts, nil)
	}
	if !tg.Relocatable {
		ref.Place(0x10000)
		got.Place(0x10000)
	}
	a, errA := ref.Section.Encode()
	b, errB := got.Section.Encode()
	switch {
	case errA != nil || errB != nil:
		return fmt.Sprintf("encoding: %v / %v", errB, errA)
	case !bytes.Equal(a, b):
		return "the section differs"
	case placed != nil && !bytes.Equal(placed, a):
		return "EncodeThenPlace's section differs"
	case !slices.Equal(ref.Starts, got.Starts) || !slices.Equal(ref.Relocs, got.Relocs):
		return "starts or relocations differ"
	case len(ref.Skipped) != len(got.Skipped):
		return fmt.Sprintf("%d skipped functions, LowerFile %d", len(got.Skipped), len(ref.Skipped))
	case ref.FDEsRead != got.FDEsRead:
		return fmt.Sprintf("%d FDEs read, LowerFile %d", got.FDEsRead, ref.FDEsRead)
	}
	for i, x := range ref.Skipped {
		y := got.Skipped[i]
		if !reflect.DeepEqual(*x.FDE, *y.FDE) || x.Reason != y.Reason || x.Emitted != y.Emitted {
			return fmt.Sprintf("skipped function %d: %v (%+v), LowerFile %v (%+v)", i, y.Error(), *y.FDE, x.Error(), *x.FDE)
		}
	}
	return ""
}

// TestScanLowerMapped lowers libstdc++ (with broken FDEs, so that some are
// skipped) from a mapping of the file: the result is that of a copy, keeps
// nothing of the mapping, and once the file is cut, LowerScan fails with
// an error instead of crashing, serially and on two workers.
func TestScanLowerMapped(t *testing.T) {
	_, libstdcxx := hostLibs(t)
	name := brokenFDEs(t, libstdcxx, 7)
	file, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		t.Fatal(err)
	}
	mapped, err := syscall.Mmap(int(file.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mapped)
	f, err := elf.NewFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := TargetForELF(f)
	if err != nil {
		t.Fatal(err)
	}
	lowerMapped := func(workers int, afterCut func()) (*Result, []*cfi.EntryError, error) {
		frames, err := cfi.OpenMapped(f, cfi.Auto, mapped)
		if err != nil {
			t.Fatal(err)
		}
		res, _, errs, err := LowerScan(f, frames, tg, Options{Workers: workers, MappedCFI: true, afterCut: afterCut})
		return res, errs, err
	}
	for _, workers := range []int{1, 2} {
		frames, err := cfi.Open(f, cfi.Auto)
		if err != nil {
			t.Fatal(err)
		}
		ref, _, refErrs, err := LowerScan(f, frames, tg, Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		dropMappedBytes(ref)
		got, errs, err := lowerMapped(workers, nil)
		if err != nil {
			t.Fatal(err)
		}
		if msg := compareScanned(ref, got, tg); msg != "" || fmt.Sprint(errs) != fmt.Sprint(refErrs) {
			t.Errorf("%d workers: mapped: %s; errors %d, %d", workers, msg, len(errs), len(refErrs))
		}
		if len(got.Skipped) == 0 {
			t.Fatal("no function skipped")
		}
		for _, s := range got.Skipped {
			if s.FDE.Instructions != nil || s.FDE.CIE != nil && s.FDE.CIE.Initial != nil {
				t.Fatalf("%d workers: skipped %v keeps bytes of the mapping", workers, s.Error())
			}
		}
	}
	// The file cut once the section is cut in parts (the workers fault),
	// then before (Cut faults).
	cut := func() {
		if err := file.Truncate(int64(f.Section(".eh_frame").Offset)); err != nil {
			t.Fatal(err)
		}
	}
	for _, workers := range []int{2, 1, 2} {
		afterCut := cut
		if st, _ := file.Stat(); st.Size() < int64(len(mapped)) {
			afterCut = nil
		}
		if _, _, err := lowerMapped(workers, afterCut); err == nil || !strings.Contains(err.Error(), "memory fault reading the CFI section") {
			t.Errorf("%d workers, the file cut: error %v", workers, err)
		}
	}
}

// dropMappedBytes drops from ref's skipped functions what a lowering
// from a mapping (Options.MappedCFI) keeps none of: their FDE's
// instructions and their CIE's initial ones.
func dropMappedBytes(ref *Result) {
	for i, s := range ref.Skipped {
		f, cie := *s.FDE, *s.FDE.CIE
		cie.Initial, f.Instructions, f.CIE = nil, nil, &cie
		ref.Skipped[i].FDE = &f
	}
}

// TestScanParallel lowers libstdc++ (whose CIEs have indirect personality
// pointers, read through a cache the Scanners share) and its copy with
// broken FDEs on 2 and 3 workers and compares with one. Under the race
// detector (make race, in CI) it checks that the parts share nothing they
// write.
func TestScanParallel(t *testing.T) {
	_, libstdcxx := hostLibs(t)
	for _, name := range []string{libstdcxx, brokenFDEs(t, libstdcxx, 5)} {
		f, tg, _, ok := openLowerable(name)
		if !ok {
			t.Fatalf("%s: cannot be lowered", name)
		}
		var ref *Result
		var refErrs []*cfi.EntryError
		var refPlaced []byte
		for _, workers := range []int{1, 2, 3} {
			frames, err := cfi.Open(f, cfi.Auto)
			if err != nil {
				t.Fatal(err)
			}
			res, _, errs, err := LowerScan(f, frames, tg, Options{Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			parts, _, err := res.EncodeThenPlace(0x10000)
			if err != nil {
				t.Fatal(err)
			}
			placed := bytes.Join(parts, nil)
			if ref == nil {
				ref, refErrs, refPlaced = res, errs, placed
				continue
			}
			if !bytes.Equal(placed, refPlaced) {
				t.Errorf("%s, %d workers: EncodeThenPlace differs", name, workers)
			}
			if msg := compareScanned(ref, res, tg); msg != "" || fmt.Sprint(errs) != fmt.Sprint(refErrs) {
				t.Errorf("%s, %d workers: %s; %d errors, %d", name, workers, msg, len(errs), len(refErrs))
			}
		}
		f.Close()
	}
}

// TestScanHold checks Options.Hold: with the held worker never let go
// (the other lowers every part) or let go at once or midway, LowerScan
// and Lower give the result of one worker, and return.
func TestScanHold(t *testing.T) {
	_, libstdcxx := hostLibs(t)
	f, tg, frames, ok := openLowerable(libstdcxx)
	if !ok {
		t.Fatal("libstdc++ cannot be lowered")
	}
	defer f.Close()
	ref, _, err := LowerFile(f, frames, tg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	refBytes, _, err := ref.EncodeThenPlace(0x10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"never", "at once", "midway"} {
		for _, scan := range []bool{false, true} {
			hold := make(chan struct{})
			opt := Options{Workers: 2, Hold: hold}
			switch when {
			case "at once":
				close(hold)
			case "midway":
				opt.afterCut = func() { go close(hold) }
				if !scan {
					go close(hold)
				}
			}
			var res *Result
			if scan {
				open, err := cfi.Open(f, cfi.Auto)
				if err != nil {
					t.Fatal(err)
				}
				res, _, _, err = LowerScan(f, open, tg, opt)
			} else {
				res, _, err = LowerFile(f, frames, tg, opt)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := res.EncodeThenPlace(0x10000)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.Join(got, nil), bytes.Join(refBytes, nil)) || !slices.Equal(res.Starts, ref.Starts) {
				t.Errorf("hold let go %s (scan %v): the result differs from one worker's", when, scan)
			}
		}
	}
}

// TestScanIndexed lowers libstdc++ (also with broken FDEs) from a mapping,
// cut by its .eh_frame_hdr, on two workers: the result is that of one
// worker. With the table made wrong (the FDEs listed 4 bytes into
// themselves, the parts cut inside entries; half the FDEs listed, more in
// some parts than they have room for), LowerScan cuts again by walking the
// entries, with the same result.
func TestScanIndexed(t *testing.T) {
	_, libstdcxx := hostLibs(t)
	for _, name := range []string{libstdcxx, brokenFDEs(t, libstdcxx, 5)} {
		for _, forge := range []string{"", "inside", "half"} {
			file, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.NewFile(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			tg, err := TargetForELF(f)
			if err != nil {
				t.Fatal(err)
			}
			hdr := f.Section(".eh_frame_hdr")
			if hdr == nil || hdr.Size < 12 {
				t.Fatalf("%s: no .eh_frame_hdr", name)
			}
			table := file[hdr.Offset+12 : hdr.Offset+hdr.Size]
			switch forge {
			case "inside":
				for e := 0; e+8 <= len(table); e += 8 {
					binary.LittleEndian.PutUint32(table[e+4:], binary.LittleEndian.Uint32(table[e+4:])+4)
				}
			case "half":
				binary.LittleEndian.PutUint32(file[hdr.Offset+8:], uint32(len(table)/16))
			}
			frames, err := cfi.Open(f, cfi.Auto)
			if err != nil {
				t.Fatal(err)
			}
			ref, _, refErrs, err := LowerScan(f, frames, tg, Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			mapped, err := cfi.OpenMapped(f, cfi.Auto, file)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, ok := mapped.CutByIndex([]int{1, 1}); !ok {
				t.Fatalf("%s: no cut by the index", name)
			}
			recut := false
			got, _, errs, err := LowerScan(f, mapped, tg, Options{Workers: 2, MappedCFI: true, recut: func() { recut = true }})
			if err != nil {
				t.Fatal(err)
			}
			dropMappedBytes(ref)
			if msg := compareScanned(ref, got, tg); msg != "" || fmt.Sprint(errs) != fmt.Sprint(refErrs) {
				t.Errorf("%s, table %q: %s; errors %d, %d", name, forge, msg, len(errs), len(refErrs))
			}
			if recut != (forge != "") {
				t.Errorf("%s, table %q: cut again %v", name, forge, recut)
			}
		}
	}
}
