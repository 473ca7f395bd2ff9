package elfpatch

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

type relSym struct {
	off     uint64
	typ     uint32
	name    string
	sect    elf.SectionIndex
	value   uint64
	symType elf.SymType
	addend  int64
}

// relocsOf returns the relocations of a RELA section with their symbols
// resolved, so renumbered objects compare equal.
func relocsOf(t *testing.T, f *elf.File, name string) []relSym {
	t.Helper()
	s := f.Section(name)
	if s == nil {
		t.Fatalf("no %s", name)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Data()
	var out []relSym
	for off := 0; off+24 <= len(b); off += 24 {
		info := f.ByteOrder.Uint64(b[off+8:])
		r := relSym{off: f.ByteOrder.Uint64(b[off:]), typ: uint32(info), addend: int64(f.ByteOrder.Uint64(b[off+16:]))}
		if i := info >> 32; i > 0 {
			sym := syms[i-1]
			r.name, r.sect, r.value, r.symType = sym.Name, sym.Section, sym.Value, elf.ST_TYPE(sym.Info)
		}
		out = append(out, r)
	}
	return out
}

// TestPatchObjectAddsSectionSymbol relocates against .data, which has no
// section symbol in gas's object: one is added as the last local symbol
// and every other relocation keeps its target.
func TestPatchObjectAddsSectionSymbol(t *testing.T) {
	p := "../testdata/gas/x86_64/basic.o"
	in, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := elf.NewFile(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	sf := make([]byte, 60)
	relocs := []Reloc{{Offset: 28, Type: 24, Section: 1}, {Offset: 44, Type: 24, Section: 2, Addend: 0}}
	var out bytes.Buffer
	if err := PatchObject(bytes.NewReader(in), int64(len(in)), &out, sf, relocs); err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	wantEH, gotEH := relocsOf(t, orig, ".rela.eh_frame"), relocsOf(t, f, ".rela.eh_frame")
	if len(wantEH) != len(gotEH) {
		t.Fatalf(".rela.eh_frame: %d entries, want %d", len(gotEH), len(wantEH))
	}
	for i := range wantEH {
		if wantEH[i] != gotEH[i] {
			t.Errorf(".rela.eh_frame[%d] = %+v, want %+v", i, gotEH[i], wantEH[i])
		}
	}
	rs := relocsOf(t, f, ".rela.sframe")
	if len(rs) != 2 || rs[0].sect != 1 || rs[1].sect != 2 || rs[0].symType != elf.STT_SECTION || rs[1].symType != elf.STT_SECTION {
		t.Errorf(".rela.sframe = %+v", rs)
	}
	st := f.Section(".symtab")
	ost := orig.Section(".symtab")
	if st.Info != ost.Info+1 {
		t.Errorf(".symtab sh_info = %d, want %d", st.Info, ost.Info+1)
	}
	rsf := f.Section(".rela.sframe")
	if rsf.Type != elf.SHT_RELA || rsf.Flags != elf.SHF_INFO_LINK || rsf.Entsize != 24 || rsf.Addralign != 8 ||
		f.Sections[rsf.Link].Name != ".symtab" || f.Sections[rsf.Info].Name != ".sframe" {
		t.Errorf(".rela.sframe header %+v", rsf.SectionHeader)
	}
	s := f.Section(".sframe")
	if s.Type != elf.SectionType(shtGNUSFrame) || s.Flags != elf.SHF_ALLOC || s.Addralign != 8 {
		t.Errorf(".sframe header %+v", s.SectionHeader)
	}
	// Existing sections keep their index.
	for i, sec := range orig.Sections {
		if f.Sections[i].Name != sec.Name {
			t.Errorf("section %d is %s, was %s", i, f.Sections[i].Name, sec.Name)
		}
	}
	tmp := filepath.Join(t.TempDir(), "o.o")
	os.WriteFile(tmp, out.Bytes(), 0o644)
	if _, errs := run(t, sysfiles.GNURef.Tool(t, "x86_64", "readelf"), "-aW", tmp); errs != "" {
		t.Errorf("readelf -aW warns: %s", errs)
	}
	if _, err := exec0(sysfiles.GNURef.Tool(t, "x86_64", "ld"), "-r", "-o", tmp+".r", tmp); err != nil {
		t.Errorf("ld -r: %v", err)
	}
}

func exec0(name string, args ...string) ([]byte, error) {
	return runCmd(name, args...)
}
