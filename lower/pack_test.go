package lower

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// TestPack checks that a packed result encodes to the same bytes as the
// unpacked one, in both modes, for every linked file and object under
// testdata (PLT FDEs, placement and the s390x padding included) and the
// system's libc.
func TestPack(t *testing.T) {
	files := append(testdataELFs(t), "/lib/x86_64-linux-gnu/libc.so.6")
	n := 0
	for _, name := range files {
		f, tg, frames, ok := openLowerable(name)
		if !ok {
			continue // the system file may be missing
		}
		for _, gas := range []bool{false, true} {
			var enc [2][]byte
			for k, pack := range []bool{false, true} {
				res, _, err := LowerFile(f, frames, tg, Options{GasCompat: gas, Pack: pack})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if pack && len(res.Section.FDEs) > 0 && res.Section.Packed == nil {
					t.Fatalf("%s: Pack gave an unpacked section", name)
				}
				if !tg.Relocatable {
					res.Place(0x10000)
				}
				if enc[k], err = res.Section.Encode(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if !bytes.Equal(enc[0], enc[1]) {
				t.Errorf("%s (gas-compat %v): packed section differs from the unpacked one", name, gas)
			}
		}
		f.Close()
		n++
	}
	if n < 20 {
		t.Fatalf("only %d files could be lowered", n)
	}
}

// TestMemo checks that a packed lowering that copies the FREs of functions
// whose CFI repeats an earlier one's gives what translating every function
// gives: the same bytes, skipped functions, starts and sources, in both
// modes, serially and on 3 workers; and that it does copy (on the big
// libraries the machine has, most functions).
func TestMemo(t *testing.T) {
	files := testdataELFs(t)
	// libc and libstdc++ are on every machine that runs the tests (CI
	// installs g++); LLVM 15 only where it is.
	system := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}
	for _, p := range system {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("system library missing: %v", err)
		}
	}
	files = append(files, system...)
	if !testing.Short() {
		files = append(files, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1")
	}
	copied, total := 0, 0
	for _, name := range files {
		f, err := elf.Open(name)
		if err != nil {
			continue // LLVM 15
		}
		tg, err := TargetForELF(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		frames, err := cfi.Read(f, cfi.Auto)
		if errors.Is(err, cfi.ErrNoCFI) {
			f.Close()
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, gas := range []bool{false, true} {
			for _, workers := range []int{1, 3} {
				var enc [2][]byte
				var res [2]*Result
				for k, noMemo := range []bool{true, false} {
					r, _, err := LowerFile(f, frames, tg, Options{GasCompat: gas, Pack: true, Workers: workers, noMemo: noMemo})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !tg.Relocatable {
						r.Place(0x10000)
					}
					if enc[k], err = r.Section.Encode(); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					res[k] = r
				}
				what := fmt.Sprintf("%s (gas-compat %v, %d workers)", name, gas, workers)
				if !bytes.Equal(enc[0], enc[1]) {
					t.Errorf("%s: the section differs with copies", what)
				}
				if !slices.Equal(res[0].Starts, res[1].Starts) || !slices.Equal(res[0].Sources, res[1].Sources) {
					t.Errorf("%s: starts or sources differ with copies", what)
				}
				if !slices.Equal(res[0].Relocs, res[1].Relocs) {
					t.Errorf("%s: relocations differ with copies", what)
				}
				if len(res[0].Skipped) != len(res[1].Skipped) {
					t.Errorf("%s: %d skipped functions with copies, %d without", what, len(res[1].Skipped), len(res[0].Skipped))
				} else {
					for i := range res[0].Skipped {
						a, b := res[0].Skipped[i], res[1].Skipped[i]
						if a.FDE != b.FDE || a.Reason != b.Reason || a.Emitted != b.Emitted {
							t.Errorf("%s: skipped function %d differs: %v / %v", what, i, a.Error(), b.Error())
						}
					}
				}
				if res[0].copied != 0 {
					t.Errorf("%s: %d functions copied with the memo off", what, res[0].copied)
				}
				if !gas && workers == 1 {
					total += len(res[1].Section.FDEs)
					copied += res[1].copied
				}
			}
		}
		f.Close()
	}
	t.Logf("%d of %d functions copied from an earlier one", copied, total)
	if copied < total/4 {
		t.Errorf("only %d of %d functions copied from an earlier one", copied, total)
	}
}

// testdataELFs returns the linked files and objects under testdata: every
// ABI, PLT variant and compiler output the golden files cover.
func testdataELFs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"link/*/*.so", "link/*/*.exe", "gas/*/*.o", "cc/*/*/*.o"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", pat))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d files under testdata", len(files))
	}
	return files
}

// openLowerable opens name and reads its CFI, reporting false (with the
// file closed) when it cannot be opened, has no target or no CFI.
func openLowerable(name string) (*elf.File, Target, *cfi.Frames, bool) {
	f, err := elf.Open(name)
	if err != nil {
		return nil, Target{}, nil, false
	}
	tg, err := TargetForELF(f)
	if err != nil {
		f.Close()
		return nil, Target{}, nil, false
	}
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		f.Close()
		return nil, Target{}, nil, false
	}
	return f, tg, frames, true
}
