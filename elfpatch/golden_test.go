package elfpatch

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestPatchLinkedGolden patches the committed GNU-linked files of
// testdata/link without SFrame with the section of their --gsframe twin
// (moved with Rebase) and checks, with no external tool: the loader
// invariants, a byte-identical second patch, and, where the twins' text
// addresses agree (x86-64, separate code), emit's dump of our section
// against the committed objdump --sframe text of the twin.
func TestPatchLinkedGolden(t *testing.T) {
	gsFiles, _ := filepath.Glob("../testdata/link/*/*.gs.*.sframe")
	if len(gsFiles) == 0 {
		t.Skip("no testdata/link")
	}
	for _, gsSec := range gsFiles {
		gs := strings.TrimSuffix(gsSec, ".sframe")   // pie.gs.exe
		plain := strings.Replace(gs, ".gs.", ".", 1) // pie.exe
		arch := filepath.Base(filepath.Dir(gs))
		t.Run(arch+"/"+filepath.Base(plain), func(t *testing.T) {
			in, err := os.ReadFile(plain)
			if err != nil {
				t.Skip(err)
			}
			sec, addr := sectionOf(t, gs, ".sframe")
			var lay Layout
			out, lay, err := patchBytesFunc(t, in, len(sec), func(a uint64) ([]byte, error) { return Rebase(sec, addr, a) })
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %+v", plain, lay)
			// Executables (whose table old kernels and qemu locate from
			// the first PT_LOAD) keep the table after the ELF header:
			// notes and .interp move out of the way instead.
			if strings.HasSuffix(plain, ".exe") && lay.PhdrsMoved {
				t.Errorf("program header table moved in an executable: %+v", lay)
			}
			if err := checkInvariants(out, len(sec)); err != nil {
				t.Fatal(err)
			}
			again, lay2, err := patchBytesFunc(t, out, len(sec), func(a uint64) ([]byte, error) { return Rebase(sec, addr, a) })
			if err != nil || !lay2.InPlace || !bytes.Equal(again, out) {
				t.Errorf("second patch: %v %+v identical=%v", err, lay2, bytes.Equal(again, out))
			}
			if !sameText(t, plain, gs) {
				return
			}
			want, err := os.ReadFile(gs + ".objdump")
			if err != nil {
				t.Skip(err)
			}
			s, err := emit.Decode(out[lay.Offset : lay.Offset+lay.Size])
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := emit.Dump(&got, s, lay.Addr, ".sframe"); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("dump differs from %s.objdump:\n%s", gs, got.String())
			}
		})
	}
}

// sameText reports whether two files have .text at the same address.
func sameText(t *testing.T, a, b string) bool {
	fa, err := elf.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := elf.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	ta, tb := fa.Section(".text"), fb.Section(".text")
	return ta != nil && tb != nil && ta.Addr == tb.Addr && ta.Size == tb.Size
}
