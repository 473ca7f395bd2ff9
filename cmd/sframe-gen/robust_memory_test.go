package main

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Crafted sizes (docs/robustness.md, "Memory: crafted sizes"): files whose
// headers claim counts and sizes that cost nothing on disk (holes) but
// that debug/elf, or sframe-gen, would allocate. Each is given to every
// command that reads it, under --memory-limit 256M: the command must
// refuse it, naming the file and the limit (or the size past the end of
// the file), and its peak RSS stay within the limit + 64 MiB.

// craftedSections writes an ELF64 x86-64 file of type typ with count
// sections in the extended form (e_shnum 0, the count in section 0's
// sh_size): a page of headers, then count section headers, all zeros but
// section 0's, as a hole (count × 64 bytes).
func craftedSections(t *testing.T, dir, name string, typ elf.Type, count uint64) string {
	t.Helper()
	const shoff = 4096
	b := make([]byte, shoff+64)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le := binary.LittleEndian
	le.PutUint16(b[0x10:], uint16(typ))
	le.PutUint16(b[0x12:], uint16(elf.EM_X86_64))
	le.PutUint32(b[0x14:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[0x28:], shoff)
	le.PutUint16(b[0x34:], 64) // e_ehsize
	le.PutUint16(b[0x36:], 56) // e_phentsize
	le.PutUint16(b[0x3a:], 64) // e_shentsize; e_shnum 0, e_shstrndx 0
	le.PutUint64(b[shoff+0x20:], count)
	return writeFile(t, dir, name, b, int64(count*64)-64)
}

// craftedLinked copies the testdata file src with count sections: its
// section headers moved to a page past its end, in the extended form
// (e_shnum 0, the count in section 0's sh_size), the sections after its
// own all zeros, a hole.
func craftedLinked(t *testing.T, dir, name, src string, count uint64) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir(), src))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	shoff, shnum := le.Uint64(data[0x28:]), uint64(le.Uint16(data[0x3c:]))
	hdrs := append([]byte(nil), data[shoff:shoff+shnum*64]...)
	off := (len(data) + 4095) &^ 4095
	data = append(data, make([]byte, off-len(data))...)
	data = append(data, hdrs...)
	le.PutUint64(data[0x28:], uint64(off))
	le.PutUint16(data[0x3c:], 0)
	le.PutUint64(data[off+0x20:], count)
	return writeFile(t, dir, name, data, int64(count-shnum)*64)
}

// craftedVersions copies the testdata file src with a table of version
// definitions of entries entries in place of its .symtab (and its
// .strtab made a version table, so that debug/elf reads them): each
// entry names the same name 65,535 times (vd_cnt, every vda_next 0), a
// string and a slice entry each in debug/elf's DynamicSymbols.
func craftedVersions(t *testing.T, dir, name, src string, entries int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir(), src))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	shoff := le.Uint64(data[0x28:])
	off := (len(data) + 4095) &^ 4095
	size := entries*20 + 8
	for i, s := range f.Sections {
		h := data[shoff+uint64(i)*64:]
		switch s.Name {
		case ".symtab":
			le.PutUint32(h[4:], uint32(elf.SHT_GNU_VERDEF))
			le.PutUint64(h[0x18:], uint64(off))
			le.PutUint64(h[0x20:], uint64(size))
		case ".strtab":
			le.PutUint32(h[4:], uint32(elf.SHT_GNU_VERSYM))
		}
	}
	table := make([]byte, size)
	aux := entries * 20
	for k := range entries {
		e := table[k*20:]
		le.PutUint16(e[0:], 1)      // vd_version
		le.PutUint16(e[6:], 0xffff) // vd_cnt
		le.PutUint32(e[12:], uint32(aux-k*20))
		if k+1 < entries {
			le.PutUint32(e[16:], 20) // vd_next
		}
	}
	le.PutUint32(table[aux:], 1) // vda_name: .dynstr's first name; vda_next 0
	data = append(data, make([]byte, off-len(data))...)
	return writeFile(t, dir, name, append(data, table...), 0)
}

// craftedNames writes an ELF64 object of n sections, each named by
// offset 0 of a string table of one name of nameLen bytes: n strings of
// nameLen bytes for debug/elf to make from a file of nameLen bytes.
func craftedNames(t *testing.T, dir, name string, n uint16, nameLen int) string {
	t.Helper()
	const shoff = 4096
	strOff := shoff + int(n)*64
	b := make([]byte, strOff+nameLen+1)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le := binary.LittleEndian
	le.PutUint16(b[0x10:], uint16(elf.ET_REL))
	le.PutUint16(b[0x12:], uint16(elf.EM_X86_64))
	le.PutUint32(b[0x14:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[0x28:], shoff)
	le.PutUint16(b[0x34:], 64)
	le.PutUint16(b[0x3a:], 64)
	le.PutUint16(b[0x3c:], n)
	le.PutUint16(b[0x3e:], 1) // e_shstrndx
	h := b[shoff+64:]
	le.PutUint32(h[4:], uint32(elf.SHT_STRTAB))
	le.PutUint64(h[0x18:], uint64(strOff))
	le.PutUint64(h[0x20:], uint64(nameLen+1))
	for i := range nameLen {
		b[strOff+i] = 'a'
	}
	return writeFile(t, dir, name, b, 0)
}

// craftedSection copies the testdata file src and moves its section
// named sec to a page past its end, with size bytes: a hole when hole is
// true, else bytes the file does not have.
func craftedSection(t *testing.T, dir, name, src, sec string, size uint64, hole bool) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir(), src))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	idx := -1
	for i, s := range f.Sections {
		if s.Name == sec {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("%s has no %s", src, sec)
	}
	shoff := binary.LittleEndian.Uint64(data[0x28:])
	h := data[shoff+uint64(idx)*64:]
	off := uint64(len(data)+4095) &^ 4095
	binary.LittleEndian.PutUint64(h[0x18:], off)
	binary.LittleEndian.PutUint64(h[0x20:], size)
	extra := int64(off) - int64(len(data))
	if hole {
		extra += int64(size)
	}
	return writeFile(t, dir, name, data, extra)
}

// craftedArchive writes a static archive of one member, the ELF object
// with count sections of craftedSections, held whole (a sparse archive).
func craftedArchive(t *testing.T, dir, name string, count uint64) string {
	t.Helper()
	member := craftedSections(t, dir, name+".o", elf.ET_REL, count)
	data, err := os.ReadFile(member)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(member)
	hdr := fmt.Sprintf("%-16s%-12s%-6s%-6s%-8s%-10d`\n", "m.o/", "0", "0", "0", "644", len(data))
	// Only the headers are data: the member's section headers are its
	// hole, kept a hole in the archive.
	head := []byte("!<arch>\n" + hdr)
	head = append(head, data[:4096+64]...)
	return writeFile(t, dir, name, head, int64(len(data))-4096-64)
}

// craftedCore writes an x86-64 core file of one thread, stopped in the
// file module, which its NT_FILE maps (one page at offset 0).
func craftedCore(t *testing.T, dir, name, module string) string {
	t.Helper()
	le := binary.LittleEndian
	note := func(typ uint32, desc []byte) []byte {
		n := make([]byte, 12, 12+8+len(desc)+3)
		le.PutUint32(n[0:], 5) // "CORE\0"
		le.PutUint32(n[4:], uint32(len(desc)))
		le.PutUint32(n[8:], typ)
		n = append(n, "CORE\x00\x00\x00\x00"...)
		n = append(n, desc...)
		for len(n)%4 != 0 {
			n = append(n, 0)
		}
		return n
	}
	prstatus := make([]byte, 336) // elf_prstatus of x86-64
	le.PutUint32(prstatus[32:], 1234)
	le.PutUint64(prstatus[112+16*8:], 0x1100) // rip: in the module
	file := make([]byte, 40)
	le.PutUint64(file[0:], 1)       // count
	le.PutUint64(file[8:], 4096)    // page size
	le.PutUint64(file[16:], 0x1000) // start
	le.PutUint64(file[24:], 0x2000) // end
	file = append(file, module+"\x00"...)
	notes := append(note(1, prstatus), note(0x46494c45, file)...) // NT_PRSTATUS, NT_FILE
	b := make([]byte, 64+56)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(b[0x10:], uint16(elf.ET_CORE))
	le.PutUint16(b[0x12:], uint16(elf.EM_X86_64))
	le.PutUint32(b[0x14:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[0x20:], 64) // e_phoff
	le.PutUint16(b[0x34:], 64)
	le.PutUint16(b[0x36:], 56)
	le.PutUint16(b[0x38:], 1) // e_phnum
	le.PutUint16(b[0x3a:], 64)
	ph := b[64:]
	le.PutUint32(ph[0:], uint32(elf.PT_NOTE))
	le.PutUint64(ph[8:], uint64(len(b)))
	le.PutUint64(ph[32:], uint64(len(notes)))
	return writeFile(t, dir, name, append(b, notes...), 0)
}

// TestMemoryCraftedSizes runs every command that reads files on each
// crafted file under --memory-limit 256M, measuring its peak RSS.
func TestMemoryCraftedSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildCommand(t)
	dir := t.TempDir()
	if d := os.Getenv("SFRAME_CRAFTED_DIR"); d != "" {
		dir = d // keep the files, to measure other builds on them
	}
	const limit = 256 << 20
	sections8M := craftedSections(t, dir, "sections8M.so", elf.ET_DYN, 8<<20)
	if b := diskBytes(t, sections8M); b > 1<<20 {
		t.Skipf("the file system does not keep holes (%d bytes on disk)", b)
	}
	sections8Mb := craftedSections(t, dir, "sections8M-2.so", elf.ET_DYN, 8<<20)
	sections4M := craftedSections(t, dir, "sections4M.so", elf.ET_DYN, 4<<20)
	core8M := craftedSections(t, dir, "sections8M.core", elf.ET_CORE, 8<<20)
	sframeHole := craftedSection(t, dir, "sframe-hole.so", "link/x86_64/direct.gs.so", ".sframe", 3<<29, true)
	sframePast := craftedSection(t, dir, "sframe-past.so", "link/x86_64/direct.gs.so", ".sframe", 3<<29, false)
	symtab := craftedSection(t, dir, "symtab.so", "link/x86_64/direct.gs.so", ".symtab", 10_000_000*24, true)
	symtabCore := craftedCore(t, dir, "symtab.core", symtab)
	archive := craftedArchive(t, dir, "sections.a", 4<<20)
	names := craftedNames(t, dir, "names.o", 1000, 1<<20)
	versions := craftedVersions(t, dir, "versions.so", "link/x86_64/direct.gs.so", 400)
	versionsCore := craftedCore(t, dir, "versions.core", versions)
	linked := craftedLinked(t, dir, "linked800k.so", "link/x86_64/direct.so", 800_000)

	over := `needs (about [0-9.]+ [MGT]iB of memory|more memory than any limit) \(.*\), over the memory limit of 256 MiB \(--memory-limit\)`
	past := `section \.sframe \(offset 0x[0-9a-f]+, size 0x60000000\) extends past the end of the file \(0x[0-9a-f]+ bytes\)`
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		// file is the file the message names, want what it says.
		file, want string
	}{
		{"generate, 8M sections", []string{"-o", out, sections8M}, sections8M, over},
		{"generate -j 2, 8M sections twice", []string{"-q", "-j", "2", "--output-dir", out + "d", sections8M, sections8Mb}, sections8M, over},
		{"dump, 8M sections", []string{"dump", sections8M}, sections8M, over},
		{"verify, 8M sections", []string{"verify", sections8M}, sections8M, over},
		{"stats, 8M sections", []string{"stats", sections8M}, sections8M, over},
		{"rows, 8M sections", []string{"rows", sections8M}, sections8M, over},
		{"stack, a core of 8M sections", []string{"stack", core8M}, core8M, over},
		{"dump, 4M sections", []string{"dump", sections4M}, sections4M, over},
		{"dump, .sframe in a 1.5 GiB hole", []string{"dump", sframeHole}, sframeHole, over},
		{"verify, .sframe in a 1.5 GiB hole", []string{"verify", sframeHole}, sframeHole, over},
		{"stats, .sframe in a 1.5 GiB hole", []string{"stats", sframeHole}, sframeHole, over},
		{"dump, .sframe past the end", []string{"dump", sframePast}, sframePast, past},
		{"verify, .sframe past the end", []string{"verify", sframePast}, sframePast, past},
		{"verify, 10M symbols", []string{"verify", symtab}, symtab, over},
		{"stack, a module of 10M symbols", []string{"stack", symtabCore}, "", regexp.QuoteMeta(symtab) + ": " + over},
		{"generate, an archive with a member of 4M sections", []string{"-o", out, archive}, archive, over},
		{"dump, an archive with a member of 4M sections", []string{"dump", archive}, archive, over},
		{"generate, CFI and 800,000 sections, each charge within the limit", []string{"-o", out, linked}, linked, over},
		{"verify, 26M version names in 8 KB", []string{"verify", versions}, versions, over},
		{"stack, a module of 26M version names in 8 KB", []string{"stack", versionsCore}, "", regexp.QuoteMeta(versions) + ": " + over},
		{"generate, 1000 section names of 1 MiB", []string{"-o", out, names}, names, over},
		{"dump, 1000 section names of 1 MiB", []string{"dump", names}, names, over},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{tc.args[0], "--memory-limit", "256M"}, tc.args[1:]...)
			if !strings.HasPrefix(tc.args[0], "-") && tc.args[0] != "dump" && tc.args[0] != "verify" && tc.args[0] != "stats" && tc.args[0] != "rows" && tc.args[0] != "stack" {
				t.Fatalf("bad case %v", tc.args)
			}
			if strings.HasPrefix(tc.args[0], "-") {
				args = append([]string{"--memory-limit", "256M"}, tc.args...)
			}
			r := runMeasured(t, bin, args...)
			t.Logf("%s: peak %d MiB, %v, exit %d", tc.name, r.maxRSS>>20, r.elapsed, r.code)
			if r.maxRSS > limit+64<<20 {
				t.Errorf("peak RSS %d MiB, over the limit (256 MiB) + 64 MiB", r.maxRSS>>20)
			}
			want := regexp.MustCompile(tc.want)
			if tc.file != "" {
				want = regexp.MustCompile(fmt.Sprintf("(?m)^sframe-gen: %s: %s$", regexp.QuoteMeta(tc.file), tc.want))
			}
			if tc.file == "" {
				// stack: the module is refused, which the walk that
				// reaches it says.
				if !want.MatchString(r.stdout) {
					t.Errorf("exit %d, stdout %q, stderr %q; want the module refused: %q", r.code, r.stdout, r.stderr, want)
				}
			} else if r.code == exitOK || !want.MatchString(r.stderr) {
				t.Errorf("exit %d, stderr %q; want a failure saying %q", r.code, r.stderr, want)
			}
		})
	}
}
