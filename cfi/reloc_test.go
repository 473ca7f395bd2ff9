package cfi

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// patchedObject returns basic.o of the x86_64 golden files with patch
// applied to its bytes, opened.
func patchedObject(t *testing.T, patch func(data []byte, f *elf.File, rela *elf.Section)) *elf.File {
	t.Helper()
	data, err := os.ReadFile("../testdata/gas/x86_64/basic.o")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rela := f.Section(".rela.eh_frame")
	if rela == nil {
		t.Fatal("no .rela.eh_frame")
	}
	patch(data, f, rela)
	f, err = elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRelocationErrors(t *testing.T) {
	le := binary.LittleEndian
	tests := []struct {
		name  string
		patch func(data []byte, f *elf.File, rela *elf.Section)
		want  string
	}{
		{"no relocations", func(data []byte, f *elf.File, rela *elf.Section) {
			// Point the relocation section's sh_info elsewhere.
			shoff := le.Uint64(data[0x28:])
			for i, s := range f.Sections {
				if s == rela {
					le.PutUint32(data[shoff+uint64(i)*64+44:], 0)
				}
			}
		}, "has no relocation"},
		{"unsupported type", func(data []byte, f *elf.File, rela *elf.Section) {
			info := le.Uint64(data[rela.Offset+8:])
			le.PutUint64(data[rela.Offset+8:], info&^0xffffffff|uint64(elf.R_X86_64_GOTPCREL))
		}, "unsupported relocation type 9"},
		{"symbol 0", func(data []byte, f *elf.File, rela *elf.Section) {
			info := le.Uint64(data[rela.Offset+8:])
			le.PutUint64(data[rela.Offset+8:], info&0xffffffff)
		}, "relocated against a symbol not defined in a section"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := patchedObject(t, tt.patch)
			fr, err := Read(f, EHFrame)
			if err != nil {
				t.Fatal(err)
			}
			if len(fr.Errors) == 0 || !strings.Contains(fr.Errors[0].Error(), tt.want) {
				t.Fatalf("errors %v, want %q", fr.Errors, tt.want)
			}
		})
	}
}

// TestRelocatedStarts checks that the unpatched object's FDEs start where
// its relocations say: offsets in .text, section index of .text.
func TestRelocatedStarts(t *testing.T) {
	f := patchedObject(t, func([]byte, *elf.File, *elf.Section) {})
	fr, err := Read(f, EHFrame)
	if err != nil || len(fr.Errors) > 0 || len(fr.FDEs) == 0 {
		t.Fatal(err, fr.Errors)
	}
	text := -1
	for i, s := range f.Sections {
		if s.Name == ".text" {
			text = i
		}
	}
	prevEnd := uint64(0)
	for _, fde := range fr.FDEs {
		if fde.Section != text || fde.Start < prevEnd {
			t.Errorf("FDE %#x: section %d start %#x (text is %d, previous end %#x)", fde.Offset, fde.Section, fde.Start, text, prevEnd)
		}
		prevEnd = fde.End()
	}
}
