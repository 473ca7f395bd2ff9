package elfread

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// What debug/elf allocates, charged before it does (docs/robustness.md,
// "Memory: crafted sizes"): a count or size in a header is checked
// against the file and its memory charged to the caller's budget before
// debug/elf, or this package, reads it, so that a crafted count (four
// million sections in a 40 KB sparse file) is refused, not allocated.

// Per-entry sizes debug/elf allocates: each program header and section
// is a struct with a SectionReader of its own and a pointer in a slice (a
// section also its name's offset), each symbol an elf.Symbol.
const (
	progBytes    = int64(unsafe.Sizeof(elf.Prog{})) + int64(unsafe.Sizeof(io.SectionReader{})) + 8
	sectionBytes = int64(unsafe.Sizeof(elf.Section{})) + int64(unsafe.Sizeof(io.SectionReader{})) + 8 + 4 +
		32 // the compression header read for a compressed section
	symbolBytes = int64(unsafe.Sizeof(elf.Symbol{}))
	// readChunk is the size above which debug/elf (internal/saferio)
	// reads data in chunks appended to one slice, which holds up to
	// 9/4 of the data while it grows.
	readChunk = 10 << 20
)

// readCost is the memory debug/elf takes to read n bytes of a section.
func readCost(n uint64) int64 {
	if n > 1<<60 {
		return 1 << 62
	}
	if n <= readChunk {
		return int64(n)
	}
	return int64(n) / 4 * 9
}

// stringCost is the memory of a Go string of n bytes (rounded up to the
// allocator's size classes, at most an eighth more).
func stringCost(n int) int64 {
	if n == 0 {
		return 0
	}
	return int64(n) + int64(n)/8 + 8
}

// elfLayout is what the ELF header of a file says of its tables.
type elfLayout struct {
	is64                 bool
	bo                   binary.ByteOrder
	phoff, shoff         uint64
	phent, phnum         uint64
	shent, shnum         uint64
	shstrndx             uint64
	wantPhent, wantShent uint64
}

// readLayout reads the ELF header of r (size bytes) as debug/elf does,
// the extended section count (e_shnum 0, the count in section 0's
// sh_size) included. ok is false when debug/elf refuses the header
// before it allocates anything for the tables.
func readLayout(r io.ReaderAt, size int64) (l elfLayout, ok bool, err error) {
	var h [64]byte
	n, _ := r.ReadAt(h[:], 0)
	if n < 16 || string(h[:4]) != elf.ELFMAG {
		return l, false, nil
	}
	switch elf.Data(h[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		l.bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		l.bo = binary.BigEndian
	default:
		return l, false, nil
	}
	bo := l.bo
	switch elf.Class(h[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		if n < 64 {
			return l, false, nil
		}
		l.is64 = true
		l.phoff, l.shoff = bo.Uint64(h[0x20:]), bo.Uint64(h[0x28:])
		l.phent, l.phnum = uint64(bo.Uint16(h[0x36:])), uint64(bo.Uint16(h[0x38:]))
		l.shent, l.shnum = uint64(bo.Uint16(h[0x3a:])), uint64(bo.Uint16(h[0x3c:]))
		l.shstrndx = uint64(bo.Uint16(h[0x3e:]))
		l.wantPhent, l.wantShent = 56, 64
	case elf.ELFCLASS32:
		if n < 52 {
			return l, false, nil
		}
		l.phoff, l.shoff = uint64(bo.Uint32(h[0x1c:])), uint64(bo.Uint32(h[0x20:]))
		l.phent, l.phnum = uint64(bo.Uint16(h[0x2a:])), uint64(bo.Uint16(h[0x2c:]))
		l.shent, l.shnum = uint64(bo.Uint16(h[0x2e:])), uint64(bo.Uint16(h[0x30:]))
		l.shstrndx = uint64(bo.Uint16(h[0x32:]))
		l.wantPhent, l.wantShent = 32, 40
	default:
		return l, false, nil
	}
	if l.phoff > 1<<63-1 || l.shoff > 1<<63-1 {
		return l, false, nil
	}
	if l.shoff > 0 && l.shnum == 0 {
		// The extended count: section 0's sh_size (and, for SHN_XINDEX,
		// the string table's index in its sh_link).
		if l.shoff > uint64(size) || uint64(size)-l.shoff < l.wantShent {
			return l, false, &CutError{msg: fmt.Sprintf("section header table (offset %#x) runs past the end of the file (%#x bytes)", l.shoff, size), err: io.ErrUnexpectedEOF}
		}
		var s [64]byte
		if _, err := r.ReadAt(s[:l.wantShent], int64(l.shoff)); err != nil {
			return l, false, fmt.Errorf("reading section 0: %w", err)
		}
		typ, link, count := l.bo.Uint32(s[4:]), l.bo.Uint32(s[0x28:]), l.bo.Uint64(s[0x20:])
		if !l.is64 {
			typ, link, count = l.bo.Uint32(s[4:]), l.bo.Uint32(s[0x18:]), uint64(l.bo.Uint32(s[0x14:]))
		}
		if elf.SectionType(typ) != elf.SHT_NULL || count < uint64(elf.SHN_LORESERVE) {
			return l, false, nil
		}
		l.shnum = count
		if l.shstrndx == uint64(elf.SHN_XINDEX) {
			if l.shstrndx = uint64(link); l.shstrndx < uint64(elf.SHN_LORESERVE) {
				return l, false, nil
			}
		}
	}
	if l.phnum > 0 && l.phent < l.wantPhent || l.shnum > 0 && l.shent < l.wantShent ||
		l.shoff == 0 && l.shnum != 0 || l.shnum > 0 && l.shstrndx >= l.shnum {
		return l, false, nil
	}
	return l, true, nil
}

// tablePast reports whether a table of n entries of ent bytes at off runs
// past the end of a file of size bytes.
func tablePast(off, n, ent uint64, size int64) bool {
	return n > 0 && (off > uint64(size) || n > (uint64(size)-off)/ent)
}

// chargeHeaders checks the program and section header tables of the ELF
// file r (size bytes), and the section name string table, against the
// file, and charges what debug/elf.NewFile allocates for them (the
// tables, an entry for each, the string table and a string for each
// section's name) before it is called. It says nothing of what
// debug/elf refuses before allocating.
func chargeHeaders(r io.ReaderAt, size int64, charge func(Cost) error) error {
	l, ok, err := readLayout(r, size)
	if !ok {
		return err
	}
	if tablePast(l.phoff, l.phnum, l.phent, size) {
		return &CutError{msg: fmt.Sprintf("program header table (offset %#x, %d entries of %d bytes) runs past the end of the file (%#x bytes)", l.phoff, l.phnum, l.phent, size), err: io.ErrUnexpectedEOF}
	}
	if tablePast(l.shoff, l.shnum, l.shent, size) {
		return &CutError{msg: fmt.Sprintf("section header table (offset %#x, %d entries of %d bytes) runs past the end of the file (%#x bytes)", l.shoff, l.shnum, l.shent, size), err: io.ErrUnexpectedEOF}
	}
	tables := int64(1 << 62) // more than any budget
	if l.shnum < 1<<40 {
		tables = int64(l.phnum)*(int64(l.phent)+progBytes) + int64(l.shnum)*(int64(l.shent)+sectionBytes)
	}
	what := fmt.Sprintf("%d program headers and %d section headers", l.phnum, l.shnum)
	switch {
	case l.phnum == 0:
		what = fmt.Sprintf("%d section headers", l.shnum)
	case l.shnum == 0:
		what = fmt.Sprintf("%d program headers", l.phnum)
	}
	if err := charge(Cost{Bytes: tables, What: what}); err != nil {
		return err
	}
	if l.shnum == 0 || l.shstrndx == 0 {
		return nil
	}
	sh, err := readSectionHeader(r, l, l.shstrndx)
	if err != nil || sh.Type != elf.SHT_STRTAB {
		return err
	}
	if sh.Flags&elf.SHF_COMPRESSED != 0 {
		// Inflated into one buffer of the size its header claims, each
		// name at most that long (a compressed name table is a
		// curiosity: no tool writes one).
		full, err := compressedSize(r, l, sh, size)
		if err != nil {
			return err
		}
		names := int64(1 << 62)
		if full < 1<<30 && l.shnum < 1<<30 {
			names = int64(l.shnum) * stringCost(int(full))
		}
		return charge(Cost{Bytes: readCost(full) + names, What: fmt.Sprintf("a compressed section name table of %s", FormatSize(int64(min(full, 1<<61))))})
	}
	if sh.Offset > uint64(size) || sh.FileSize > uint64(size)-sh.Offset {
		return &CutError{msg: fmt.Sprintf("the section name table (offset %#x, size %#x) extends past the end of the file (%#x bytes)", sh.Offset, sh.FileSize, size), err: io.ErrUnexpectedEOF}
	}
	// The table is read twice: here, to count its names, and by
	// debug/elf.
	strtab := sh.FileSize
	if err := charge(Cost{Bytes: int64(strtab) + readCost(strtab) + int64(strtab)/nulBlock*8, What: fmt.Sprintf("a section name table of %s", FormatSize(int64(strtab)))}); err != nil {
		return err
	}
	tab, err := readStrtab(r, sh)
	if err != nil {
		return err
	}
	var names int64
	err = forEachEntry(r, l.shoff, l.shnum, l.shent, func(e []byte) {
		names += tab.cost(l.bo.Uint32(e))
	})
	if err != nil {
		return err
	}
	return charge(Cost{Bytes: names, What: fmt.Sprintf("the names of %d sections", l.shnum)})
}

// readSectionHeader reads the header of section i.
func readSectionHeader(r io.ReaderAt, l elfLayout, i uint64) (elf.SectionHeader, error) {
	var s [64]byte
	if _, err := r.ReadAt(s[:l.wantShent], int64(l.shoff+i*l.shent)); err != nil {
		return elf.SectionHeader{}, fmt.Errorf("reading section header %d: %w", i, err)
	}
	bo := l.bo
	if l.is64 {
		return elf.SectionHeader{
			Type: elf.SectionType(bo.Uint32(s[4:])), Flags: elf.SectionFlag(bo.Uint64(s[8:])),
			Offset: bo.Uint64(s[0x18:]), FileSize: bo.Uint64(s[0x20:]), Link: bo.Uint32(s[0x28:]),
		}, nil
	}
	return elf.SectionHeader{
		Type: elf.SectionType(bo.Uint32(s[4:])), Flags: elf.SectionFlag(bo.Uint32(s[8:])),
		Offset: uint64(bo.Uint32(s[0x10:])), FileSize: uint64(bo.Uint32(s[0x14:])), Link: bo.Uint32(s[0x18:]),
	}, nil
}

// compressedSize is the size the compression header of sh claims.
func compressedSize(r io.ReaderAt, l elfLayout, sh elf.SectionHeader, size int64) (uint64, error) {
	var ch [24]byte
	n := uint64(24)
	if !l.is64 {
		n = 12
	}
	if sh.Offset > uint64(size) || uint64(size)-sh.Offset < n {
		return 0, &CutError{msg: fmt.Sprintf("a compressed section (offset %#x) extends past the end of the file (%#x bytes)", sh.Offset, size), err: io.ErrUnexpectedEOF}
	}
	if _, err := r.ReadAt(ch[:n], int64(sh.Offset)); err != nil {
		return 0, err
	}
	if l.is64 {
		return l.bo.Uint64(ch[8:]), nil
	}
	return uint64(l.bo.Uint32(ch[4:])), nil
}

// forEachEntry calls fn with each of the n entries of ent bytes at off,
// read in blocks of a fixed size.
func forEachEntry(r io.ReaderAt, off, n, ent uint64, fn func([]byte)) error {
	per := min(n, max(1, (64<<10)/ent))
	buf := make([]byte, per*ent)
	for i := uint64(0); i < n; i += per {
		k := min(per, n-i)
		if _, err := r.ReadAt(buf[:k*ent], int64(off+i*ent)); err != nil {
			return fmt.Errorf("reading the table at %#x: %w", off+i*ent, err)
		}
		for j := uint64(0); j < k; j++ {
			fn(buf[j*ent : (j+1)*ent])
		}
	}
	return nil
}

// nulBlock is the size of the blocks of a string table whose first NUL
// strtab keeps: a string's length is found by scanning at most one block.
const nulBlock = 256

// strtab is a string table in memory and, for each block of nulBlock
// bytes, the offset of the first NUL at or after its start (-1: none),
// so that the length of a string is found in constant time however many
// names share a long one.
type strtab struct {
	data []byte
	nul  []int64
}

// readStrtab reads the string table sh (its size checked against the
// file, and charged, by the caller).
func readStrtab(r io.ReaderAt, sh elf.SectionHeader) (*strtab, error) {
	t := &strtab{data: make([]byte, sh.FileSize)}
	if _, err := r.ReadAt(t.data, int64(sh.Offset)); err != nil {
		return nil, fmt.Errorf("reading the string table at %#x: %w", sh.Offset, err)
	}
	t.nul = make([]int64, (len(t.data)+nulBlock-1)/nulBlock)
	next := int64(-1)
	for b := len(t.nul) - 1; b >= 0; b-- {
		blk := t.data[b*nulBlock : min(len(t.data), (b+1)*nulBlock)]
		if i := bytes.IndexByte(blk, 0); i >= 0 {
			next = int64(b*nulBlock + i)
		}
		t.nul[b] = next
	}
	return t, nil
}

// cost is the memory debug/elf takes for the string at off: a string of
// its length when a NUL ends it (getString), nothing otherwise.
func (t *strtab) cost(off uint32) int64 {
	if int(off) >= len(t.data) {
		return 0
	}
	b := int(off) / nulBlock
	end := min(len(t.data), (b+1)*nulBlock)
	if i := bytes.IndexByte(t.data[off:end], 0); i >= 0 {
		return stringCost(i)
	}
	if b+1 >= len(t.nul) || t.nul[b+1] < 0 {
		return 0
	}
	return stringCost(int(t.nul[b+1]) - int(off))
}

// sectionPast returns an error naming s when its bytes in the file extend
// past the end of a file of size bytes (SHT_NOBITS has none).
func sectionPast(s *elf.Section, size int64) error {
	if s.Type == elf.SHT_NOBITS {
		return nil
	}
	if s.Offset > uint64(size) || s.FileSize > uint64(size)-s.Offset {
		return &CutError{msg: fmt.Sprintf("section %s (offset %#x, size %#x) extends past the end of the file (%#x bytes)", s.Name, s.Offset, s.FileSize, size), err: io.ErrUnexpectedEOF}
	}
	return nil
}

// sectionCost is the memory reading s takes (inflated, when compressed),
// after checking it is in the file.
func sectionCost(s *elf.Section, size int64) (int64, error) {
	if err := sectionPast(s, size); err != nil {
		return 0, err
	}
	if s.Type == elf.SHT_NOBITS {
		return 0, nil
	}
	return readCost(s.Size), nil
}

// ChargeSection charges the memory reading the section s of f (a file of
// size bytes) takes, and factor-1 times its size more for what is built
// from its bytes, checking first that it is in the file: a section that
// extends past the end is a *CutError naming it.
func (m *Meter) ChargeSection(s *elf.Section, size int64, factor int64, what string) error {
	n, err := sectionCost(s, size)
	if err != nil {
		return err
	}
	if s.Size > 1<<40 {
		n = 1 << 62
	} else {
		n += int64(s.Size) * (max(factor, 1) - 1)
	}
	return m.Charge(Cost{Bytes: n, What: fmt.Sprintf("%s of %s", what, FormatSize(int64(min(s.Size, 1<<61))))})
}

// ChargeSymbols charges what f.Symbols() (typ elf.SHT_SYMTAB) or
// f.DynamicSymbols() (elf.SHT_DYNSYM) allocates for f, a file of size
// bytes: the table, its string table, an elf.Symbol per entry and a
// string per name. A table or string table that extends past the end of
// the file is an error; a file without one charges nothing.
func (m *Meter) ChargeSymbols(f *elf.File, size int64, typ elf.SectionType) error {
	return chargeSymbols(f, size, typ, m.Charge)
}

func chargeSymbols(f *elf.File, size int64, typ elf.SectionType, charge func(Cost) error) error {
	sym := f.SectionByType(typ)
	if sym == nil {
		return nil
	}
	ent := uint64(elf.Sym64Size)
	if f.Class == elf.ELFCLASS32 {
		ent = elf.Sym32Size
	}
	symBytes, err := sectionCost(sym, size)
	if err != nil {
		return err
	}
	var str *elf.Section
	if sym.Link > 0 && int(sym.Link) < len(f.Sections) {
		str = f.Sections[sym.Link]
	}
	var strBytes int64
	if str != nil {
		if strBytes, err = sectionCost(str, size); err != nil {
			return err
		}
	}
	n := sym.Size / ent
	entries := int64(1 << 62)
	if n < 1<<40 {
		entries = int64(n) * symbolBytes
	}
	what := fmt.Sprintf("a symbol table of %d entries", n)
	if typ == elf.SHT_DYNSYM {
		// The version tables DynamicSymbols reads beside.
		for _, t := range []elf.SectionType{elf.SHT_GNU_VERSYM, elf.SHT_GNU_VERDEF, elf.SHT_GNU_VERNEED} {
			if v := f.SectionByType(t); v != nil {
				c, err := sectionCost(v, size)
				if err != nil {
					return err
				}
				entries += 2 * c // read here (versionCost) and by debug/elf
			}
		}
	}
	if str == nil || str.Flags&elf.SHF_COMPRESSED != 0 || sym.Flags&elf.SHF_COMPRESSED != 0 || str.Type == elf.SHT_NOBITS {
		// No names to count here (a tool never compresses these): at
		// most the whole string table for each.
		names := int64(1 << 62)
		if n < 1<<30 && str != nil && str.Size < 1<<30 {
			names = int64(n) * stringCost(int(str.Size))
		}
		return charge(Cost{Bytes: symBytes + strBytes + entries + names, What: what})
	}
	// The string table is read twice: here, to count the names, and by
	// debug/elf.
	if err := charge(Cost{Bytes: symBytes + strBytes + entries + int64(str.FileSize) + int64(str.FileSize)/nulBlock*8, What: what}); err != nil {
		return err
	}
	tab, err := readStrtab(str, elf.SectionHeader{Offset: 0, FileSize: str.FileSize})
	if err != nil {
		return err
	}
	var names int64
	if err := forEachEntry(sym, 0, n, ent, func(e []byte) { names += tab.cost(f.ByteOrder.Uint32(e)) }); err != nil {
		return err
	}
	if err := charge(Cost{Bytes: names, What: fmt.Sprintf("the names of %d symbols", n)}); err != nil || typ != elf.SHT_DYNSYM {
		return err
	}
	v, err := versionCost(f, tab)
	if err != nil {
		return err
	}
	vwhat := "the names of the symbols' versions"
	if v > maxVersionBytes {
		vwhat = fmt.Sprintf("version tables naming over %s", FormatSize(maxVersionBytes))
	}
	return charge(Cost{Bytes: v, What: vwhat})
}

// sframeFactor is the memory reading and decoding an SFrame section takes
// per byte of it: its bytes, and the decoded FDEs and FREs (a 3-byte FRE
// becomes 32 bytes and a data word; verify's checks hold as much again).
const sframeFactor = 16

// ChargeSFrame charges reading and checking the .sframe section of f (a
// file of size bytes) as dump, stats and verify do: its bytes and what is
// decoded from them, and in an object its relocations and symbol table.
// A section that extends past the end of the file is an error; a file
// without one charges nothing.
func (m *Meter) ChargeSFrame(f *elf.File, size int64) error {
	sec := emit.FindSection(f)
	if sec == nil {
		return nil
	}
	if err := m.ChargeSection(sec, size, sframeFactor, "an SFrame section"); err != nil {
		return err
	}
	if f.Type != elf.ET_REL {
		return nil
	}
	for i, s := range f.Sections {
		if s == sec {
			for _, rs := range f.Sections {
				if (rs.Type == elf.SHT_RELA || rs.Type == elf.SHT_REL) && int(rs.Info) == i {
					if err := m.ChargeSection(rs, size, 1, "relocations"); err != nil {
						return err
					}
				}
			}
		}
	}
	return m.ChargeSymbols(f, size, elf.SHT_SYMTAB)
}

// ChargeNames charges what target.NewSymbols takes for f (a file of size bytes):
// its .symtab, or its .dynsym when it has none.
func (m *Meter) ChargeNames(f *elf.File, size int64) error { return chargeNames(f, size, m.Charge) }

func chargeNames(f *elf.File, size int64, charge func(Cost) error) error {
	if s := f.SectionByType(elf.SHT_SYMTAB); s != nil && s.Size > 0 {
		return chargeSymbols(f, size, elf.SHT_SYMTAB, charge)
	}
	return chargeSymbols(f, size, elf.SHT_DYNSYM, charge)
}

// ChargeCFI charges reading f's CFI and evaluating it (cfiCost), as rows,
// stats and verify do.
func (m *Meter) ChargeCFI(f *elf.File, src cfi.Source) error { return m.Charge(cfiCost(f, src)) }

// cfiFactor is what reading a CFI section and evaluating it holds, per
// byte of the section: as lowering it does (the root package's
// lowerFactor).
const cfiFactor = 8

// cfiCost is the cost of reading f's CFI and evaluating it, as the
// commands that only read it do (rows, stats, verify).
func cfiCost(f *elf.File, src cfi.Source) Cost {
	var n int64
	if b, err := cfi.SectionBytes(f, src); err == nil && b <= cfi.MaxSectionBytes {
		n = int64(b)
	}
	return Cost{Bytes: cfiFactor * n, What: fmt.Sprintf("%s of CFI to read", FormatSize(n))}
}

// offsetIn returns what reads a 32-bit offset in a version table d of
// f's byte order: one past the table for any offset beyond it, so that
// sums of offsets stay ints on every platform.
func offsetIn(bo binary.ByteOrder, d []byte) func([]byte) int {
	return func(p []byte) int {
		if v := uint64(bo.Uint32(p)); v <= uint64(len(d)) {
			return int(v)
		}
		return len(d) + 1
	}
}

// maxVersionBytes bounds versionCost's walk: version tables that would
// take more are charged as more than any budget.
const maxVersionBytes = 2 << 30

// versionCost is what debug/elf's DynamicSymbols allocates for the
// version definitions and needs of f (names in tab), walked as it walks
// them: an entry's names are read cnt times over when their next
// offset is 0, so a few bytes of table can make millions of strings.
// Each is appended to a slice, which growing by a quarter allocates up
// to 5 times its final size in all.
func versionCost(f *elf.File, tab *strtab) (int64, error) {
	bo := f.ByteOrder
	var total int64
	over := func() bool { return total > maxVersionBytes }
	if vd := f.SectionByType(elf.SHT_GNU_VERDEF); vd != nil {
		d, err := vd.Data()
		if err != nil {
			return 0, nil // debug/elf ignores it too
		}
		off := offsetIn(bo, d)
		for i := 0; i+20 <= len(d) && bo.Uint16(d[i:]) == 1; {
			cnt, aux, next := int(bo.Uint16(d[i+6:])), off(d[i+12:]), off(d[i+16:])
			if cnt == 0 {
				break
			}
			total += 5 * 64 // a DynamicVersion, appended
			for c, j := 0, i+aux; c < cnt && j+8 <= len(d); c++ {
				total += tab.cost(bo.Uint32(d[j:])) + 5*16 // a name, appended
				if over() {
					return 1 << 62, nil
				}
				j += off(d[j+4:])
			}
			if next == 0 {
				break
			}
			i += next
		}
	}
	if vn := f.SectionByType(elf.SHT_GNU_VERNEED); vn != nil {
		d, err := vn.Data()
		if err != nil {
			return total, nil
		}
		off := offsetIn(bo, d)
		for i := 0; i+16 <= len(d) && bo.Uint16(d[i:]) == 1; {
			cnt, aux, next := int(bo.Uint16(d[i+2:])), off(d[i+8:]), off(d[i+12:])
			total += tab.cost(bo.Uint32(d[i+4:])) + 5*40 // a DynamicVersionNeed
			for c, j := 0, i+aux; c < cnt && j+16 <= len(d); c++ {
				total += tab.cost(bo.Uint32(d[j+8:])) + 5*24 // a DynamicVersionDep
				if over() {
					return 1 << 62, nil
				}
				dn := off(d[j+12:])
				if dn == 0 {
					break
				}
				j += dn
			}
			if next == 0 {
				break
			}
			i += next
		}
	}
	return total, nil
}
