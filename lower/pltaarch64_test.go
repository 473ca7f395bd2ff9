package lower_test

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/verify"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// a64PLTProgram calls through the PLT and uses a TLS variable of another
// module (a TLSDESC call in a shared library built -fPIC).
const a64PLTProgram = `
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern __thread int counter;
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int work(int n) {
	int v[4] = {n, 3, 1, 2};
	qsort(v, 4, sizeof v[0], cmp);
	printf("%d %zu\n", v[0], strlen("abc"));
	return v[0] + counter++;
}
`

// a64PLTMain is a program calling through its PLT.
const a64PLTMain = `
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(int argc, char **argv) {
	int v[3] = {argc, 2, 1};
	qsort(v, 3, sizeof v[0], cmp);
	printf("%d %zu\n", v[0], strlen(argv[0]));
	return 0;
}
`

// TestAArch64PLT links AArch64 programs and libraries with GNU ld in each
// PLT form it writes (lazy and -z now; -z force-bti, which gives PLT0 a bti
// c and, in a position-dependent executable only, the entries too; -z pac-plt; both; a lazy
// library with the TLSDESC trampoline) and writes SFrame into them:
// in the default mode the .plt gets FDEs for all its code, as PCMASK for
// the entries, which verify proves against the instructions; in GasCompat
// mode, as ld, none.
func TestAArch64PLT(t *testing.T) {
	cc := "aarch64-linux-gnu-gcc"
	sysfiles.NeedProgram(t, cc)
	dir := t.TempDir()
	lib, exe := filepath.Join(dir, "lib.c"), filepath.Join(dir, "main.c")
	for path, text := range map[string]string{lib: a64PLTProgram, exe: a64PLTMain} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	libFlags := []string{"-O2", "-fPIC", "-shared", lib}
	exeFlags := []string{"-O2", exe}
	cases := []struct {
		name      string
		flags     []string
		entrySize uint64
		plt0FRE   uint32 // start of PLT0's second FRE (after the stp)
		tlsdesc   bool
	}{
		{"library lazy", append(libFlags, "-Wl,-z,lazy"), 16, 4, true},
		{"library now", append(libFlags, "-Wl,-z,now"), 16, 4, false},
		{"library force-bti", append(libFlags, "-Wl,-z,lazy", "-Wl,-z,force-bti"), 16, 8, true},
		{"library pac-plt", append(libFlags, "-Wl,-z,lazy", "-Wl,-z,pac-plt"), 24, 4, true},
		{"program", exeFlags, 16, 4, false},
		{"program force-bti", append(exeFlags, "-Wl,-z,force-bti"), 16, 8, false}, // PIE: entries as a library's
		{"program -no-pie force-bti", append(exeFlags, "-no-pie", "-Wl,-z,force-bti"), 24, 8, false},
		{"program pac-plt", append(exeFlags, "-Wl,-z,pac-plt"), 24, 4, false},
		{"program force-bti pac-plt", append(exeFlags, "-Wl,-z,force-bti", "-Wl,-z,pac-plt"), 24, 8, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("case%d", i))
			args := append([]string{"-o", out}, tc.flags...)
			if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, msg)
			}
			checkA64PLT(t, out, tc.entrySize, tc.plt0FRE, tc.tlsdesc)
		})
	}
}

// checkA64PLT writes SFrame into a copy of path in both modes and checks
// the .plt's FDEs and verify's proof of them.
func checkA64PLT(t *testing.T, path string, entrySize uint64, plt0FRE uint32, tlsdesc bool) {
	t.Helper()
	out := path + ".sframe"
	if _, err := sframegen.WriteFile(path, out, sframegen.Options{}); err != nil {
		t.Fatal(err)
	}
	f, sec, plt := readA64(t, out)
	defer f.Close()
	var starts []uint64
	var covered uint64
	for i := range sec.NumFDEs() {
		fde, err := sec.FDE(i)
		if err != nil {
			t.Fatal(err)
		}
		start := sec.FuncStart(i, sframeAddr(f))
		if start < plt.Addr || start >= plt.Addr+plt.Size {
			continue
		}
		starts = append(starts, start)
		covered += uint64(fde.Size)
		switch {
		case start == plt.Addr:
			if len(fde.FREs) != 2 || fde.FREs[1].StartAddr != plt0FRE || fde.FREs[1].Words[0] != 16 || fde.FREs[1].Words[1] != -8 {
				t.Errorf("PLT0 FDE: FREs %+v, want sp+0, then at %d sp+16 with RA at CFA-8", fde.FREs, plt0FRE)
			}
		case fde.PCType() == emit.PCMask:
			if uint64(fde.RepSize) != entrySize || len(fde.FREs) != 1 || fde.FREs[0].Words[0] != 0 || len(fde.FREs[0].Words) != 1 {
				t.Errorf("PLTn FDE: rep %d FREs %+v, want rep %d and one FRE sp+0, RA in x30", fde.RepSize, fde.FREs, entrySize)
			}
		default: // the TLSDESC trampoline
			if !tlsdesc || len(fde.FREs) != 2 || fde.FREs[1].Words[0] != 16 || len(fde.FREs[1].Words) != 1 {
				t.Errorf("FDE at %#x: %+v, want the TLSDESC trampoline's (expected: %v)", start, fde.FREs, tlsdesc)
			}
		}
	}
	want := 2
	if tlsdesc {
		want = 3
	}
	if len(starts) != want || covered != plt.Size {
		t.Errorf("%d FDEs in .plt %#x+%#x covering %#x bytes, want %d covering all", len(starts), plt.Addr, plt.Size, covered, want)
	}
	rep, err := verify.File(f, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Errorf("verify: %v", p)
	}
	var proven, padding uint64
	for _, n := range rep.Notes {
		switch {
		case strings.HasPrefix(n.Msg, "no CFI describes AArch64 PLT stubs"):
			proven += n.Bytes
		case strings.HasPrefix(n.Msg, "padding after a .plt stub's branch"):
			padding += n.Bytes
		}
	}
	if proven+padding != plt.Size || proven < plt.Size/2 {
		t.Errorf("verify proved %d of the .plt's %d bytes against the code (%d of padding)", proven, plt.Size, padding)
	}

	// GasCompat: no FDE in the .plt, as GNU ld.
	gas := path + ".gas"
	if _, err := sframegen.WriteFile(path, gas, sframegen.Options{GasCompat: true}); err != nil {
		t.Fatal(err)
	}
	g, gsec, _ := readA64(t, gas)
	defer g.Close()
	for i := range gsec.NumFDEs() {
		if s := gsec.FuncStart(i, sframeAddr(g)); s >= plt.Addr && s < plt.Addr+plt.Size {
			t.Errorf("--gas-compat: an FDE at %#x in the .plt", s)
		}
	}
	if gsec.NumFDEs()+want != sec.NumFDEs() {
		t.Errorf("--gas-compat: %d FDEs, default %d: want the default's less the %d of the .plt", gsec.NumFDEs(), sec.NumFDEs(), want)
	}
}

func readA64(t *testing.T, path string) (*elf.File, *emit.Section, *elf.Section) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := emit.FindSection(f).Data()
	if err != nil {
		t.Fatal(err)
	}
	sec, err := emit.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	plt := f.Section(".plt")
	if plt == nil || f.Machine != elf.EM_AARCH64 {
		t.Fatalf("%s: no .plt, or not AArch64", path)
	}
	return f, sec, plt
}

func sframeAddr(f *elf.File) uint64 { return emit.FindSection(f).Addr }
