package lower

import (
	"bytes"
	"debug/elf"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestShortcuts checks that the two shortcuts of a packed lowering change
// nothing: the memo (functions whose CFI repeats an earlier one's get a
// copy of its FREs) and the fast path (fast.go). With each, both and
// neither, on every file under testdata, libc, libstdc++ and LLVM (where it is), in
// both modes, serially and on 3 workers: the same bytes, skipped functions
// and reasons, starts, sources and relocations. And that they are taken:
// on the big libraries the memo alone copies a quarter of the functions at
// least, the fast path alone lowers three in four, on each ABI.
func TestShortcuts(t *testing.T) {
	files := testdataELFs(t)
	// libc and libstdc++ are on every machine that runs the tests (CI
	// installs g++), and the AArch64 and s390x sanitizer runtimes (gcc's
	// cross-compilers depend on them); LLVM only where it is.
	libc, libstdcxx := hostLibs(t)
	files = append(files, libc, libstdcxx,
		sysfiles.CompilerLib(t, "aarch64-linux-gnu-gcc", "libasan.so.8"), sysfiles.CompilerLib(t, "aarch64-linux-gnu-gcc", "libtsan.so.2"),
		sysfiles.CompilerLib(t, "s390x-linux-gnu-gcc", "libasan.so.8"), sysfiles.CompilerLib(t, "s390x-linux-gnu-gcc", "libubsan.so.1"))
	if llvm := sysfiles.BigLib(t); llvm != "" && !testing.Short() {
		files = append(files, llvm)
	}
	variants := []struct {
		name           string
		noMemo, noFast bool
	}{
		{"neither", true, true}, // the reference
		{"memo", false, true},
		{"fast path", true, false},
		{"both", false, false},
	}
	copied, total := 0, 0
	fast, functions := map[Arch]int{}, map[Arch]int{} // per ABI, the fast path alone
	for _, name := range files {
		f, tg, frames, ok := openLowerable(name)
		if !ok {
			if !strings.HasPrefix(name, "../testdata/") {
				t.Fatalf("%s cannot be lowered", name)
			}
			continue // an object without CFI
		}
		for _, gas := range []bool{false, true} {
			for _, workers := range []int{1, 3} {
				var ref []byte
				var refRes *Result
				for _, v := range variants {
					r, _, err := LowerFile(f, frames, tg, Options{GasCompat: gas, Workers: workers, noMemo: v.noMemo, noFast: v.noFast})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !tg.Relocatable {
						r.Place(0x10000)
					}
					enc, err := r.Section.Encode()
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					what := fmt.Sprintf("%s (gas-compat %v, %d workers, %s)", name, gas, workers, v.name)
					if v.noMemo && r.copied != 0 || v.noFast && r.fast != 0 || gas && r.fast != 0 {
						t.Errorf("%s: %d functions copied, %d on the fast path", what, r.copied, r.fast)
					}
					if !gas && workers == 1 {
						switch v.name {
						case "memo":
							total += r.Section.NumFDEs()
							copied += r.copied
						case "fast path":
							fast[tg.Arch] += r.fast
							functions[tg.Arch] += r.Section.NumFDEs()
						}
					}
					if refRes == nil {
						ref, refRes = enc, r
						continue
					}
					compareResults(t, what, ref, enc, refRes, r)
				}
			}
		}
		f.Close()
	}
	t.Logf("of %d functions, %d copied from an earlier one by the memo alone", total, copied)
	if copied < total/4 {
		t.Errorf("of %d functions only %d copied from an earlier one by the memo alone", total, copied)
	}
	for _, arch := range []Arch{AMD64, AArch64, S390X} {
		t.Logf("%v: of %d functions, %d lowered on the fast path alone", arch, functions[arch], fast[arch])
		if fast[arch] < functions[arch]*3/4 {
			t.Errorf("%v: of %d functions only %d lowered on the fast path alone", arch, functions[arch], fast[arch])
		}
	}
}

// compareResults reports where the lowering b (encoded: encB) differs
// from the reference a.
func compareResults(t *testing.T, what string, encA, encB []byte, a, b *Result) {
	t.Helper()
	if !bytes.Equal(encA, encB) {
		t.Errorf("%s: the section differs", what)
	}
	if !slices.Equal(a.Starts, b.Starts) || !slices.Equal(a.Sources, b.Sources) {
		t.Errorf("%s: starts or sources differ", what)
	}
	if !slices.Equal(a.Relocs, b.Relocs) {
		t.Errorf("%s: relocations differ", what)
	}
	if len(a.Skipped) != len(b.Skipped) {
		t.Errorf("%s: %d skipped functions, %d in the reference", what, len(b.Skipped), len(a.Skipped))
		return
	}
	for i := range a.Skipped {
		x, y := a.Skipped[i], b.Skipped[i]
		if x.FDE != y.FDE || x.Reason != y.Reason || x.Emitted != y.Emitted {
			t.Errorf("%s: skipped function %d differs: %v / %v", what, i, y.Error(), x.Error())
		}
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

// lowerPlaced lowers f (frames, for LowerFile) with opt, by LowerScan when
// scan, and places a linked file's section at 0x1000; what names the
// case in failures.
func lowerPlaced(t *testing.T, what string, f *elf.File, frames *cfi.Frames, tg Target, opt Options, scan bool) *Result {
	t.Helper()
	var res *Result
	var err error
	if scan {
		open, err := cfi.Open(f, cfi.Auto)
		if err != nil {
			t.Fatal(err)
		}
		if res, _, _, err = LowerScan(f, open, tg, opt); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	} else if res, _, err = LowerFile(f, frames, tg, opt); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !tg.Relocatable {
		res.Place(0x1000)
	}
	return res
}
