package elfpatch

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// synthExec builds a small linked ET_DYN image (not runnable): PT_PHDR,
// two PT_LOADs (R with a note after the headers, R+X text), PT_NOTE,
// PT_GNU_STACK, and section headers.
func synthExec(o binary.ByteOrder) []byte {
	const (
		nph     = 5
		noteOff = ehdrSize + nph*phdrSize
		noteLen = 0x40
		dataOff = noteOff + noteLen
		dataLen = 0x48
		textOff = 0x1000
		textLen = 0x40
	)
	shstr := []byte("\x00.note.gnu.build-id\x00.text\x00.shstrtab\x00.dynsym\x00")
	strOff := uint64(textOff + textLen)
	shoff := alignUp(strOff+uint64(len(shstr)), 8)
	b := make([]byte, shoff+5*shdrSize)
	h := header{order: o, typ: etDyn, machine: 62, version: 1, entry: textOff, phoff: ehdrSize, shoff: shoff,
		ehsize: ehdrSize, phentsize: phdrSize, phnum: nph, shentsize: shdrSize, shnum: 5, shstrndx: 3}
	copy(h.ident[:], "\x7fELF\x02\x01\x01")
	if o == binary.BigEndian {
		h.ident[5] = 2
		h.machine = 22
	}
	encodeHeader(b, &h)
	progs := []prog{
		{Type: ptPhdr, Flags: pfR, Off: ehdrSize, Vaddr: ehdrSize, Paddr: ehdrSize, Filesz: nph * phdrSize, Memsz: nph * phdrSize, Align: 8},
		{Type: ptLoad, Flags: pfR, Off: 0, Filesz: dataOff + dataLen, Memsz: dataOff + dataLen, Align: 0x1000},
		{Type: ptLoad, Flags: pfR | pfX, Off: textOff, Vaddr: textOff, Paddr: textOff, Filesz: textLen, Memsz: textLen, Align: 0x1000},
		{Type: 4, Flags: pfR, Off: noteOff, Vaddr: noteOff, Paddr: noteOff, Filesz: noteLen, Memsz: noteLen, Align: 4},
		{Type: ptGNUStack, Flags: pfR | pfW, Align: 16},
	}
	for i := range progs {
		encodeProg(o, b[ehdrSize+i*phdrSize:], &progs[i])
	}
	o.PutUint32(b[noteOff:], 4)
	o.PutUint32(b[noteOff+4:], noteLen-16)
	o.PutUint32(b[noteOff+8:], 3)
	copy(b[noteOff+12:], "GNU\x00")
	for i := textOff; i < textOff+textLen; i++ {
		b[i] = 0xc3
	}
	copy(b[strOff:], shstr)
	sects := []sect{
		{},
		{Name: 1, Type: 7, Flags: shfAlloc, Addr: noteOff, Off: noteOff, Size: noteLen, Addralign: 4},
		{Name: 20, Type: 1, Flags: shfAlloc | 4, Addr: textOff, Off: textOff, Size: textLen, Addralign: 16},
		{Name: 26, Type: shtStrtab, Off: strOff, Size: uint64(len(shstr)), Addralign: 1},
		{Name: 36, Type: 11, Flags: shfAlloc, Addr: dataOff, Off: dataOff, Size: dataLen, Addralign: 8, Entsize: symSize},
	}
	for i := range sects {
		encodeSect(o, b[shoff+uint64(i)*shdrSize:], &sects[i])
	}
	return b
}

// patchBytes runs PatchLinked on in (through temporary files) and returns
// the output.
func patchBytes(t testing.TB, in []byte, sf []byte) ([]byte, Layout, error) {
	return patchBytesFunc(t, in, len(sf), func(uint64) ([]byte, error) { return sf, nil })
}

// patchBytesFunc is patchBytes with an encode callback.
func patchBytesFunc(t testing.TB, in []byte, size int, enc func(uint64) ([]byte, error)) ([]byte, Layout, error) {
	var lay Layout
	out, err := patchFiles(t, in, func(fi, fo *os.File) (err error) {
		lay, err = PatchLinked(fi, fo, size, enc)
		return err
	})
	return out, lay, err
}

// patchOverCopy patches in with PatchLinkedCopyParts, the section sf in
// two pieces, the copy of in made by its wait.
func patchOverCopy(t testing.TB, in []byte, sf []byte) ([]byte, error) {
	return patchFiles(t, in, func(fi, fo *os.File) error {
		_, err := PatchLinkedCopyParts(fi, fo, len(sf), func(uint64) ([][]byte, error) {
			return [][]byte{sf[:len(sf)/2], sf[len(sf)/2:]}, nil
		}, func() error {
			_, err := fo.Write(in)
			return err
		})
		return err
	})
}

// patchFiles writes in to a temporary file, runs patch on it and a new
// output file, and returns the output's contents (nil on patch's error).
func patchFiles(t testing.TB, in []byte, patch func(fi, fo *os.File) error) ([]byte, error) {
	dir := t.TempDir()
	ip, op := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(ip, in, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Open(ip)
	if err != nil {
		t.Fatal(err)
	}
	defer fi.Close()
	fo, err := os.Create(op)
	if err != nil {
		t.Fatal(err)
	}
	defer fo.Close()
	if err := patch(fi, fo); err != nil {
		return nil, err
	}
	out, err := os.ReadFile(op)
	if err != nil {
		t.Fatal(err)
	}
	return out, nil
}

// checkInvariants checks what loaders need of a patched file.
func checkInvariants(b []byte, sfLen int) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return err
	}
	var sf *elf.Prog
	var loads []*elf.Prog
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			if n := len(loads); n > 0 && p.Vaddr < loads[n-1].Vaddr+loads[n-1].Memsz {
				return fmt.Errorf("PT_LOAD at %#x overlaps or is out of order", p.Vaddr)
			}
			if p.Align > 1 && (p.Off-p.Vaddr)%p.Align != 0 {
				return fmt.Errorf("PT_LOAD at %#x: offset and address differ modulo align", p.Vaddr)
			}
			loads = append(loads, p)
		case programType:
			if sf != nil {
				return fmt.Errorf("two PT_GNU_SFRAME")
			}
			sf = p
		}
	}
	if sf == nil || sf.Filesz != uint64(sfLen) || sf.Memsz != uint64(sfLen) || sf.Flags != elf.PF_R || sf.Align != 8 {
		return fmt.Errorf("bad PT_GNU_SFRAME %+v", sf)
	}
	in := false
	for _, l := range loads {
		if sf.Vaddr >= l.Vaddr && sf.Vaddr+sf.Memsz <= l.Vaddr+l.Filesz && sf.Off-l.Off == sf.Vaddr-l.Vaddr {
			if l.Flags != elf.PF_R {
				return fmt.Errorf("PT_GNU_SFRAME in a PT_LOAD with flags %v", l.Flags)
			}
			in = true
		}
	}
	if !in {
		return fmt.Errorf("PT_GNU_SFRAME not inside a PT_LOAD")
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_PHDR {
			if p.Off != binary.LittleEndian.Uint64(b[32:]) && p.Off != binary.BigEndian.Uint64(b[32:]) {
				return fmt.Errorf("PT_PHDR offset %#x is not e_phoff", p.Off)
			}
			ok := false
			for _, l := range loads {
				ok = ok || (p.Off >= l.Off && p.Off+p.Filesz <= l.Off+l.Filesz)
			}
			if !ok {
				return fmt.Errorf("PT_PHDR not inside a PT_LOAD")
			}
		}
	}
	if len(f.Sections) == 0 {
		return nil // no section header table (sstrip): PT_GNU_SFRAME alone
	}
	s := f.Section(".sframe")
	if shstrndx := f.ByteOrder.Uint16(b[62:]); shstrndx == 0 {
		// No section-name table: the section is found by its type.
		for _, x := range f.Sections {
			if x.Type == elf.SectionType(shtGNUSFrame) {
				s = x
			}
		}
	}
	if s == nil || s.Type != elf.SectionType(shtGNUSFrame) || s.Addr != sf.Vaddr || s.Offset != sf.Off || s.Size != uint64(sfLen) {
		return fmt.Errorf("bad .sframe section header %+v", s)
	}
	data, err := s.Data()
	if err != nil {
		return err
	}
	if len(data) != sfLen {
		return fmt.Errorf(".sframe has %d bytes", len(data))
	}
	return nil
}

func TestPatchLinkedSynthetic(t *testing.T) {
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, n := range []int{28, 200, 5000} {
			t.Run(fmt.Sprintf("%v/%d", o, n), func(t *testing.T) {
				sf := bytes.Repeat([]byte{0xa5}, n)
				out, lay, err := patchBytes(t, synthExec(o), sf)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%+v", lay)
				if err := checkInvariants(out, n); err != nil {
					t.Fatal(err)
				}
				if lay.PhdrsMoved != (n > 1000) {
					t.Errorf("PhdrsMoved %v: the note after the table should make room for one entry, not two", lay.PhdrsMoved)
				}
				if got := out[lay.Offset : lay.Offset+uint64(n)]; !bytes.Equal(got, sf) {
					t.Errorf("section bytes not written")
				}
				again, lay2, err := patchBytes(t, out, sf)
				if err != nil {
					t.Fatal(err)
				}
				if !(lay2.InPlace || lay2.Replaced) || !bytes.Equal(again, out) {
					t.Errorf("second patch: %+v, identical %v", lay2, bytes.Equal(again, out))
				}
			})
		}
	}
}

func TestPatchLinkedBadInput(t *testing.T) {
	o := binary.LittleEndian
	good := synthExec(o)
	mod := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	phdr := func(i int) int { return ehdrSize + i*phdrSize }
	cases := []struct {
		name, want string
		in         []byte
	}{
		{"empty", "not an ELF file", nil},
		{"magic", "bad magic", mod(func(b []byte) { b[1] = 'X' })},
		{"class32", "ELFCLASS32", mod(func(b []byte) { b[4] = 1 })},
		{"reloc", "not ET_EXEC or ET_DYN", mod(func(b []byte) { o.PutUint16(b[16:], etRel) })},
		{"truncated phdrs", "program header table at offset 0x40 size 0x118 extends past end of file", good[:200]},
		{"phdr past end", "program header 2 (LOAD) at offset 0x1000 size 0x10000040 extends past end of file", mod(func(b []byte) { o.PutUint64(b[phdr(2)+32:], 0x10000040); o.PutUint64(b[phdr(2)+40:], 0x10000040) })},
		{"shdrs past end", "section header", mod(func(b []byte) { o.PutUint64(b[40:], 1<<40) })},
		{"section past end", "section 2 (.text) at offset 0x1000 size 0x100000 extends past end of file", mod(func(b []byte) {
			sh := int(o.Uint64(b[40:]))
			o.PutUint64(b[sh+2*shdrSize+32:], 0x100000)
		})},
		{"overlap", "PT_LOAD segments overlap", mod(func(b []byte) { o.PutUint64(b[phdr(1)+40:], 0x2000) })},
		{"unsorted", "not sorted", mod(func(b []byte) { o.PutUint64(b[phdr(1)+16:], 0x2000) })},
		{"filesz>memsz", "p_filesz", mod(func(b []byte) { o.PutUint64(b[phdr(2)+40:], 1) })},
		{"congruence", "differ modulo p_align", mod(func(b []byte) { o.PutUint64(b[phdr(2)+16:], 0x1100) })},
		{"two sframe phdrs", "two PT_GNU_SFRAME", mod(func(b []byte) {
			o.PutUint32(b[phdr(3):], ptGNUSFrame)
			o.PutUint32(b[phdr(4):], ptGNUSFrame)
		})},
		{"shstrndx", "section-name table index", mod(func(b []byte) { o.PutUint16(b[62:], 9) })},
		{"no loads", "no PT_LOAD", mod(func(b []byte) { o.PutUint32(b[phdr(1):], 4); o.PutUint32(b[phdr(2):], 4) })},
		// Found by cmd/sframe-gen's damage test: .text with the SFrame
		// section type was overwritten with the new section.
		{"code typed SFrame", "section 2 (.text) has type SHT_GNU_SFRAME but is not named .sframe", mod(func(b []byte) {
			sh := int(o.Uint64(b[40:]))
			o.PutUint32(b[sh+2*shdrSize+4:], shtGNUSFrame)
		})},
		// Found by cmd/sframe-gen's damage test: bytes two parts claim
		// changed under one of them (.dynsym's symbol updates landed in
		// .symtab; a section on the header tables was rewritten).
		{"section on ELF header", "section 2 (.text) (file offsets 0x0-0x40) overlaps the ELF header", mod(func(b []byte) {
			sh := int(o.Uint64(b[40:]))
			o.PutUint64(b[sh+2*shdrSize+24:], 0)
		})},
		{"section on phdrs", "overlaps the program header table", mod(func(b []byte) {
			sh := int(o.Uint64(b[40:]))
			o.PutUint64(b[sh+2*shdrSize+24:], ehdrSize+8)
		})},
		{"sections overlap", "section 4 (.dynsym) (file offsets 0x1000-0x1048) overlaps section 2 (.text)", mod(func(b []byte) {
			sh := int(o.Uint64(b[40:]))
			o.PutUint64(b[sh+4*shdrSize+24:], 0x1000)
		})},
		{"dangling sh_info", "sh_info", mod(func(b []byte) {
			sh := int(o.Uint64(b[40:]))
			n := uint32(o.Uint16(b[60:]))
			o.PutUint32(b[sh+2*shdrSize+4:], shtRela)
			o.PutUint32(b[sh+2*shdrSize+44:], n) // the index the appended section gets
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := patchBytes(t, c.in, make([]byte, 64))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestPatchObjectBadInput(t *testing.T) {
	in, err := os.ReadFile("../testdata/gas/x86_64/basic.o")
	if err != nil {
		t.Fatal(err)
	}
	gs, err := os.ReadFile("../testdata/gas/x86_64/basic.gs.o")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, want string
		in         []byte
		relocs     []Reloc
	}{
		{"linked", "not ET_REL", synthExec(binary.LittleEndian), nil},
		{"section range", "section index 999 out of range", in, []Reloc{{Offset: 28, Type: 24, Section: 999}}},
		{"offset range", "outside the 36-byte .sframe", in, []Reloc{{Offset: 30, Type: 24, Section: 1}}},
		{"truncated", "extends past end of file", in[:len(in)-100], nil},
		// Found by cmd/sframe-gen's damage test: an existing relocation
		// section whose sh_info names the index .sframe gets would
		// relocate it; a code section with the SFrame type was replaced.
		{"dangling sh_info", "sh_info", setShdr(t, in, ".rela.eh_frame", 44, 4, uint64(shnum(in))), nil},
		{"dangling sh_link", "sh_link", setShdr(t, in, ".rela.eh_frame", 40, 4, uint64(shnum(in))+1), nil},
		{"code typed SFrame", "(.text) has type SHT_GNU_SFRAME", setShdr(t, in, ".text", 4, 4, shtGNUSFrame), nil},
		{"section on ELF header", "(.eh_frame) (file offsets 0x0-", setShdr(t, in, ".eh_frame", 24, 8, 0), nil},
		{"sframe of odd type", "(.sframe) has type 0x8", setShdr(t, gs, ".sframe", 4, 4, shtNobits), nil},
		{"executable sframe", "(.sframe) is writable or executable", setShdr(t, gs, ".sframe", 8, 8, shfAlloc|shfExecinstr), nil},
		// Found by FuzzPatchObject (b3ed0016150a8ac9): the symbol names
		// in an SHT_NULL section, whose bytes the new layout drops.
		{"string table SHT_NULL", "its string table, section", setShdr(t, in, ".strtab", 4, 4, shtNull), nil},
		{"string table PROGBITS", "its string table, section", setShdr(t, in, ".strtab", 4, 4, 1), nil},
		// Found by FuzzPatchObject (cd4682d047d9044b): a new section
		// symbol's st_name 0 names what the table starts with.
		// Found by FuzzPatchObject (af2c7396968cd5b7): readers look for
		// a compression header where the new layout puts the section.
		{"compressed NOBITS", "SHT_NOBITS but has the SHF_COMPRESSED flag", setShdr(t, in, ".bss", 8, 8, 3|shfCompressed), nil},
		{"compressed NULL", "SHT_NULL but has the SHF_COMPRESSED flag", setShdr(t, setShdr(t, in, ".data", 4, 4, shtNull), ".data", 8, 8, shfCompressed), nil},
		{"string table without NUL", "does not start with a NUL byte", strtabStart(t, in, 'x'), []Reloc{{Offset: 28, Type: 24, Section: 1}, {Offset: 28, Type: 24, Section: 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := PatchObject(bytes.NewReader(c.in), int64(len(c.in)), &out, make([]byte, 36), c.relocs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
			if out.Len() != 0 {
				t.Errorf("%d bytes written on error", out.Len())
			}
		})
	}
}

// shnum returns e_shnum of the little-endian ELF64 file b.
func shnum(b []byte) int { return int(binary.LittleEndian.Uint16(b[60:])) }

// setShdr returns a copy of the little-endian ELF64 file b with a field of
// the header of section name (at byte off, width 4 or 8) set to v.
func setShdr(t *testing.T, b []byte, name string, off, width int, v uint64) []byte {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	o := binary.LittleEndian
	shoff := int(o.Uint64(b[40:]))
	out := append([]byte(nil), b...)
	for i, s := range f.Sections {
		if s.Name != name {
			continue
		}
		p := shoff + i*shdrSize + off
		if width == 4 {
			o.PutUint32(out[p:], uint32(v))
		} else {
			o.PutUint64(out[p:], v)
		}
		return out
	}
	t.Fatalf("no section %s", name)
	return nil
}

// TestPatchObjectReplacesSFrameRelocations: a relocation section aimed at
// .sframe by sh_info is replaced with the new relocations whatever its name
// and flags (one without SHF_INFO_LINK was kept and would have relocated the
// new section with stale entries).
func TestPatchObjectReplacesSFrameRelocations(t *testing.T) {
	in, err := os.ReadFile("../testdata/gas/x86_64/basic.gs.o")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	o := binary.LittleEndian
	shoff := o.Uint64(in[40:])
	var ehName uint32
	for i, s := range f.Sections {
		if s.Name == ".rela.eh_frame" {
			ehName = o.Uint32(in[shoff+uint64(i)*shdrSize:])
		}
	}
	odd := setShdr(t, setShdr(t, in, ".rela.sframe", 8, 8, 0), ".rela.sframe", 0, 4, uint64(ehName))
	var out bytes.Buffer
	relocs := []Reloc{{Offset: 28, Type: uint32(elf.R_X86_64_PC64), Section: 1, Addend: 0}}
	sf := make([]byte, 44)
	if err := PatchObject(bytes.NewReader(odd), int64(len(odd)), &out, sf, relocs); err != nil {
		t.Fatal(err)
	}
	g, err := elf.NewFile(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	sfIdx, n := -1, 0
	for i, s := range g.Sections {
		if s.Name == ".sframe" {
			sfIdx = i
		}
	}
	for _, s := range g.Sections {
		if (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && int(s.Info) == sfIdx {
			n++
			if s.Size != 24 {
				t.Errorf("%s: %d bytes of relocations, want the one new entry", s.Name, s.Size)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d relocation sections for .sframe, want 1", n)
	}
}

// TestSectionZeroCleared: section header 0 holds only the extended
// numbering fields in an output, whatever the input had there (found by
// FuzzPatchObject, 40f973f1086dfd5a: an SHF_COMPRESSED flag and a size in
// entry 0 made the patched object unreadable once its size was cleared).
func TestSectionZeroCleared(t *testing.T) {
	obj, err := os.ReadFile("../testdata/gas/x86_64/basic.o")
	if err != nil {
		t.Fatal(err)
	}
	exec := synthExec(binary.LittleEndian)
	dirty := func(b []byte) []byte {
		b = setShdr(t, b, "", 32, 8, 1<<50)   // sh_size
		b = setShdr(t, b, "", 56, 8, 7)       // sh_entsize
		b = setShdr(t, b, "", 8, 8, 0x5f5f5f) // sh_flags, SHF_COMPRESSED among them
		if _, err := elf.NewFile(bytes.NewReader(b)); err != nil {
			t.Fatalf("dirty input unreadable: %v", err)
		}
		return b
	}
	sf := make([]byte, 36)
	var objOut bytes.Buffer
	if err := PatchObject(bytes.NewReader(dirty(obj)), int64(len(obj)), &objOut, sf, []Reloc{{Offset: 28, Type: 24, Section: 1}}); err != nil {
		t.Fatalf("object: %v", err)
	}
	linkedOut, _, err := patchBytes(t, dirty(exec), sf)
	if err != nil {
		t.Fatalf("linked: %v", err)
	}
	for name, out := range map[string][]byte{"object": objOut.Bytes(), "linked": linkedOut} {
		f, err := elf.NewFile(bytes.NewReader(out))
		if err != nil {
			t.Errorf("%s: output unreadable: %v", name, err)
			continue
		}
		if s := f.Sections[0]; s.Flags != 0 || s.Size != 0 || s.Entsize != 0 || s.Type != elf.SHT_NULL {
			t.Errorf("%s: section 0 is %+v, want all zero", name, s.SectionHeader)
		}
	}
}

// strtabStart returns a copy of the little-endian ELF64 object b whose
// .strtab starts with the byte c.
func strtabStart(t *testing.T, b []byte, c byte) []byte {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".strtab")
	if s == nil || s.Size == 0 {
		t.Fatal("no .strtab")
	}
	out := append([]byte(nil), b...)
	out[s.Offset] = c
	return out
}

// TestPatchLinkedClearsPhdrExec: a PT_PHDR with PF_X (old linkers wrote
// PF_R|PF_X) loses PF_X, as the Linux kernel registers the SFrame section
// for every PF_X header; Layout says so, and the output patches into
// itself. A PT_PHDR without PF_X is left as it is.
func TestPatchLinkedClearsPhdrExec(t *testing.T) {
	for _, c := range []struct {
		name        string
		flags, want uint32
		cleared     bool
	}{
		{"R+X", pfR | pfX, pfR, true},
		{"R", pfR, pfR, false},
		{"R+W+X", pfR | pfW | pfX, pfR | pfW, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
				in := synthExec(o)
				o.PutUint32(in[ehdrSize+4:], c.flags) // program header 0: PT_PHDR
				sf := make([]byte, 64)
				out, lay, err := patchBytes(t, in, sf)
				if err != nil {
					t.Fatal(err)
				}
				f, err := elf.NewFile(bytes.NewReader(out))
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range f.Progs {
					if p.Type == elf.PT_PHDR && uint32(p.Flags) != c.want {
						t.Errorf("%v: PT_PHDR flags %v, want %v", o, p.Flags, elf.ProgFlag(c.want))
					}
				}
				if lay.PhdrExecCleared != c.cleared {
					t.Errorf("%v: Layout.PhdrExecCleared = %v, want %v", o, lay.PhdrExecCleared, c.cleared)
				}
				again, lay2, err := patchBytes(t, out, sf)
				if err != nil || !bytes.Equal(again, out) || lay2.PhdrExecCleared {
					t.Errorf("%v: second patch (error %v, cleared %v) differs from the first", o, err, lay2.PhdrExecCleared)
				}
			}
		})
	}
}
