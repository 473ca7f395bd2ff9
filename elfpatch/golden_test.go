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
		t.Fatal("no testdata/link")
	}
	for _, gsSec := range gsFiles {
		gs := strings.TrimSuffix(gsSec, ".sframe")   // pie.gs.exe
		plain := strings.Replace(gs, ".gs.", ".", 1) // pie.exe
		arch := filepath.Base(filepath.Dir(gs))
		t.Run(arch+"/"+filepath.Base(plain), func(t *testing.T) {
			in, err := os.ReadFile(plain)
			if err != nil {
				t.Fatal(err)
			}
			sec, addr := sectionOf(t, gs, ".sframe")
			var lay Layout
			out, lay, err := patchBytesFunc(t, in, len(sec), func(a uint64) ([]byte, error) { return rebase(sec, addr, a) })
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %+v", plain, lay)
			// Executables (whose table old kernels and qemu locate from
			// the first PT_LOAD) keep the table after the ELF header
			// whenever moving notes and .interp out of the way makes room
			// for the entries a new PT_LOAD needs.
			if strings.HasSuffix(plain, ".exe") && lay.PhdrsMoved && movableRoom(t, plain) >= 2*56 {
				t.Errorf("program header table moved in an executable that had room: %+v", lay)
			}
			if err := checkInvariants(out, len(sec)); err != nil {
				t.Fatal(err)
			}
			again, lay2, err := patchBytesFunc(t, out, len(sec), func(a uint64) ([]byte, error) { return rebase(sec, addr, a) })
			if err != nil || !(lay2.InPlace || lay2.Replaced) || !bytes.Equal(again, out) {
				t.Errorf("second patch: %v %+v identical=%v", err, lay2, bytes.Equal(again, out))
			}
			if !sameText(t, plain, gs) {
				return
			}
			want, err := os.ReadFile(gs + ".objdump")
			if err != nil {
				t.Fatal(err)
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

// movableRoom is the number of bytes after the program header table that
// notes and .interp occupy, up to the first other section: the room the
// table can grow into where it is.
func movableRoom(t *testing.T, path string) uint64 {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 {
		t.Fatalf("%s: not ELFCLASS64", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) < 0x28 {
		t.Fatalf("%s: %v", path, err)
	}
	phoff := f.ByteOrder.Uint64(raw[0x20:]) // e_phoff
	end := phoff + uint64(len(f.Progs))*56
	next := uint64(1) << 62
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NULL || s.Offset < end || s.Type == elf.SHT_NOTE || s.Name == ".interp" {
			continue
		}
		next = min(next, s.Offset)
	}
	return next - end
}
