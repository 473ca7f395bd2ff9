package elfpatch

import (
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// oneFDE returns an x86-64 SFrame v3 section with one FDE covering
// [start, start+size): CFA = SP+8 from the first instruction.
func oneFDE(start uint64, size uint32) func(addr uint64) ([]byte, error) {
	return func(addr uint64) ([]byte, error) {
		s, err := emit.NewSection(emit.Header{Version: emit.Version3, Flags: emit.FlagFDESorted | emit.FlagFDEFuncStartPCRel,
			ABI: emit.ABIAMD64LittleEndian, CFAFixedRAOffset: -8},
			[]emit.FDE{{Size: size, Info: emit.FuncInfo(emit.PCInc, emit.FREAddr4, false, false),
				FREs: []emit.FRE{{StartAddr: 0, Info: emit.FREInfo(true, 1, emit.DataWord1B, false), Words: []int32{8}}}}})
		if err != nil {
			return nil, err
		}
		s.SetFuncStart(0, start, addr)
		return s.Encode()
	}
}

// TestPatchSystemPrograms patches copies of real programs and libraries of
// this machine with a hand-made section covering the entry point, runs the
// programs, and checks that patching needs little memory.
func TestPatchSystemPrograms(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("x86-64 host only")
	}
	readelf := sysfiles.GNURef.Tool(t, "x86_64", "readelf")
	cases := []struct {
		name string
		find func(t *testing.T) string // the file's path (testutil_test.go)
		args []string                  // run with these; nil: do not run (library)
	}{
		{"ls", func(t *testing.T) string { return sysfiles.PathProgram(t, "ls") }, []string{"--version"}},
		{"python3", func(t *testing.T) string { return sysfiles.PathProgram(t, "python3") }, []string{"--version"}},
		{"libLLVM", func(t *testing.T) string {
			p := sysfiles.BigLib(t)
			if p == "" {
				// CI does not install LLVM: the other cases stand.
				t.Skip("no libLLVM in ldconfig -p: install Debian's libllvm19 (optional: CI does not install LLVM)")
			}
			return p
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.find(t)
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			entry := f.Entry
			f.Close()
			if entry == 0 {
				entry = 0x1000
			}
			dir := t.TempDir()
			out := filepath.Join(dir, filepath.Base(path))
			enc, _ := oneFDE(entry, 16)(0)
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			lay := patchPath(t, path, out, len(enc), oneFDE(entry, 16))
			runtime.ReadMemStats(&ms1)
			st, _ := os.Stat(path)
			alloc := ms1.TotalAlloc - ms0.TotalAlloc
			t.Logf("%s (%d bytes): %+v, %d bytes allocated", path, st.Size(), lay, alloc)
			if alloc > 4<<20 {
				t.Errorf("patching allocated %d bytes", alloc)
			}
			if out, errs := run(t, readelf, "-lSW", out); errs != "" {
				t.Errorf("readelf warns: %s\n%s", errs, out)
			}
			if sysfiles.NeedProgram(t, "eu-elflint") != "" {
				// The two SFrame types are unknown to elflint.
				if a, b := elflintCount(t, path), elflintCount(t, out); b > a+2 {
					t.Errorf("eu-elflint: %d findings, original %d", b, a)
				}
			}
			if tc.args == nil {
				return
			}
			want, _ := exec.Command(path, tc.args...).CombinedOutput()
			got, err := exec.Command(out, tc.args...).CombinedOutput()
			if err != nil || string(got) != string(want) {
				t.Errorf("patched %s %v: %v\n%s\nwant\n%s", path, tc.args, err, got, want)
			}
			stripped := filepath.Join(dir, "stripped")
			run(t, sysfiles.GNURef.Tool(t, "x86_64", "strip"), "-o", stripped, out)
			if got, err := exec.Command(stripped, tc.args...).CombinedOutput(); err != nil || string(got) != string(want) {
				t.Errorf("stripped patched %s %v: %v\n%s", path, tc.args, err, got)
			}
			// Second patch: byte-identical.
			again := filepath.Join(dir, "again")
			patchPath(t, out, again, len(enc), oneFDE(entry, 16))
			if !sameFile(t, out, again) {
				t.Errorf("second patch differs")
			}
		})
	}
}

func patchPath(t *testing.T, in, out string, size int, enc func(uint64) ([]byte, error)) Layout {
	t.Helper()
	fi, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer fi.Close()
	fo, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer fo.Close()
	lay, err := PatchLinked(fi, fo, size, enc)
	if err != nil {
		t.Fatalf("PatchLinked %s: %v", in, err)
	}
	return lay
}

func sameFile(t *testing.T, a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	ba, bb := make([]byte, 1<<16), make([]byte, 1<<16)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, _ := io.ReadFull(fb, bb)
		if na != nb || string(ba[:na]) != string(bb[:nb]) {
			return false
		}
		if ea != nil {
			return true
		}
	}
}
