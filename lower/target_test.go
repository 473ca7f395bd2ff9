package lower

import (
	"debug/elf"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

func TestTargetByName(t *testing.T) {
	tests := []struct {
		name string
		abi  emit.ABI
		ra   int8
	}{
		{"x86_64", emit.ABIAMD64LittleEndian, -8},
		{"amd64", emit.ABIAMD64LittleEndian, -8},
		{"aarch64", emit.ABIAArch64LittleEndian, 0},
		{"arm64", emit.ABIAArch64LittleEndian, 0},
		{"aarch64_be", emit.ABIAArch64BigEndian, 0},
		{"s390x", emit.ABIS390XBigEndian, 0},
	}
	for _, tc := range tests {
		tg, err := TargetByName(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		h := tg.Header()
		if h.ABI != tc.abi || h.CFAFixedRAOffset != tc.ra || h.Version != emit.Version3 || h.Flags != emit.FlagFDEFuncStartPCRel {
			t.Errorf("%s: header %+v", tc.name, h)
		}
		if tg.Relocatable {
			t.Errorf("%s: relocatable", tc.name)
		}
	}
	for _, bad := range []string{"i386", "x32", "riscv64", ""} {
		if _, err := TargetByName(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestTargetForELF(t *testing.T) {
	tests := []struct {
		file  string
		abi   emit.ABI
		reloc uint32
	}{
		{"../testdata/gas/x86_64/basic.o", emit.ABIAMD64LittleEndian, uint32(elf.R_X86_64_PC64)},
		{"../testdata/gas/aarch64/basic.o", emit.ABIAArch64LittleEndian, uint32(elf.R_AARCH64_PREL64)},
		{"../testdata/gas/aarch64_be/basic.o", emit.ABIAArch64BigEndian, uint32(elf.R_AARCH64_PREL64)},
		{"../testdata/gas/s390x/basic.o", emit.ABIS390XBigEndian, uint32(elf.R_390_PC64)},
	}
	for _, tc := range tests {
		f, err := elf.Open(tc.file)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		tg, err := TargetForELF(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if tg.ABI() != tc.abi || tg.RelocType() != tc.reloc || !tg.Relocatable {
			t.Errorf("%s: %+v abi %v reloc %d", tc.file, tg, tg.ABI(), tg.RelocType())
		}
	}
	for _, fh := range []elf.FileHeader{
		{Class: elf.ELFCLASS32, Data: elf.ELFDATA2LSB, Machine: elf.EM_386},
		{Class: elf.ELFCLASS32, Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64}, // x32
		{Class: elf.ELFCLASS64, Data: elf.ELFDATA2LSB, Machine: elf.EM_RISCV},
		{Class: elf.ELFCLASS64, Data: elf.ELFDATA2MSB, Machine: elf.EM_X86_64},
		{Class: elf.ELFCLASS64, Data: elf.ELFDATA2LSB, Machine: elf.EM_S390},
	} {
		if tg, err := TargetForELF(&elf.File{FileHeader: fh}); err == nil {
			t.Errorf("%v %v %v: got %v, want an error", fh.Class, fh.Data, fh.Machine, tg)
		}
	}
}

func TestLowerChecks(t *testing.T) {
	if _, err := Lower(nil, Target{Arch: AMD64}, Options{}); err == nil {
		t.Error("nil frames: no error")
	}
	if _, err := Lower(&cfi.Frames{Relocatable: true}, Target{Arch: AMD64}, Options{}); err == nil {
		t.Error("relocatable CFI with a linked target: no error")
	}
	if _, err := Lower(&cfi.Frames{}, Target{Arch: AMD64, BigEndian: true}, Options{}); err == nil {
		t.Error("big-endian x86-64: no error")
	}
	res, err := Lower(&cfi.Frames{Relocatable: true}, Target{Arch: S390X, BigEndian: true, Relocatable: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := res.Section.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// Header-only, padded to 32 bytes on s390x.
	if len(b) != 32 {
		t.Errorf("empty s390x section: %d bytes, want 32", len(b))
	}
}
