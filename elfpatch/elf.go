package elfpatch

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// ELF constants used by this package (from the gABI and GNU extensions).
const (
	etRel  = 1
	etExec = 2
	etDyn  = 3

	ptNull        = 0
	ptLoad        = 1
	ptPhdr        = 6
	ptGNUEHFrame  = 0x6474e550
	ptGNUStack    = 0x6474e551
	ptGNURelro    = 0x6474e552
	ptGNUProperty = 0x6474e553
	ptGNUSFrame   = 0x6474e554

	pfX = 1
	pfW = 2
	pfR = 4

	shtNull        = 0
	shtProgbits    = 1
	shtSymtab      = 2
	shtStrtab      = 3
	shtRela        = 4
	shtNobits      = 8
	shtRel         = 9
	shtGroup       = 17
	shtSymtabShndx = 18
	shtGNUSFrame   = 0x6ffffff4

	shfWrite      = 0x1
	shfAlloc      = 0x2
	shfExecinstr  = 0x4
	shfCompressed = 0x800
	shfInfoLink   = 0x40
	shfMerge      = 0x10

	shnUndef     = 0
	shnLoreserve = 0xff00
	shnXindex    = 0xffff

	ehdrSize = 64
	phdrSize = 56
	shdrSize = 64
	symSize  = 24
	relaSize = 24

	sttSection = 3
)

// programType is PT_GNU_SFRAME, the program header type that locates
// .sframe in a loaded image.
const programType = ptGNUSFrame

// header is the ELF file header of an ELFCLASS64 file.
type header struct {
	order     binary.ByteOrder
	ident     [16]byte
	typ       uint16
	machine   uint16
	version   uint32
	entry     uint64
	phoff     uint64
	shoff     uint64
	flags     uint32
	ehsize    uint16
	phentsize uint16
	phnum     uint16
	shentsize uint16
	shnum     uint16
	shstrndx  uint16
}

// prog is one program header.
type prog struct {
	Type, Flags                             uint32
	Off, Vaddr, Paddr, Filesz, Memsz, Align uint64
}

// sect is one section header.
type sect struct {
	Name, Type             uint32
	Flags, Addr, Off, Size uint64
	Link, Info             uint32
	Addralign, Entsize     uint64
}

// hasContent reports whether the section occupies bytes in the file.
func (s *sect) hasContent() bool {
	return s.Type != shtNull && s.Type != shtNobits && s.Size > 0
}

// file is the parsed header tables of an ELF file.
type file struct {
	size  int64
	hdr   header
	progs []prog
	sects []sect
	// shstrtab is the content of the section-name string table (nil if none).
	shstrtab []byte
	// shstrndx is the real index of the section-name table (extended
	// numbering resolved); 0 if none.
	shstrndx int
}

// maxTableBytes bounds any single table read into memory (section-name
// table, symbol table of an object), so a forged size cannot force a huge
// allocation beyond what the file itself holds.
const maxTableBytes = 1 << 28

// maxAlign is the largest section or segment alignment accepted; real
// files use at most a large page (2 MiB, some 1 GiB-aligned kernels aside).
const maxAlign = 1 << 30

// readFull reads n bytes at off, checking the range against size.
func readFull(r io.ReaderAt, size int64, off, n uint64, what string) ([]byte, error) {
	if n > maxTableBytes {
		return nil, fmt.Errorf("%s: size %#x too large", what, n)
	}
	if off > uint64(size) || n > uint64(size)-off {
		return nil, fmt.Errorf("%s at offset %#x size %#x extends past end of file (%#x bytes)", what, off, n, size)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, int64(off)); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, fmt.Errorf("reading %s at offset %#x: %w", what, off, err)
	}
	return b, nil
}

// parse reads and checks the ELF header, program headers, section headers
// and section-name table of r.
func parse(r io.ReaderAt, size int64) (*file, error) {
	b, err := readFull(r, size, 0, ehdrSize, "ELF header")
	if err != nil {
		if size < ehdrSize {
			return nil, fmt.Errorf("not an ELF file: %d bytes, shorter than an ELF header", size)
		}
		return nil, err
	}
	if string(b[:4]) != "\x7fELF" {
		return nil, errors.New("not an ELF file: bad magic")
	}
	f := &file{size: size}
	h := &f.hdr
	copy(h.ident[:], b[:16])
	switch b[4] {
	case 2:
	case 1:
		return nil, errors.New("ELFCLASS32 file: SFrame is defined for 64-bit ABIs only")
	default:
		return nil, fmt.Errorf("unknown ELF class %d", b[4])
	}
	switch b[5] {
	case 1:
		h.order = binary.LittleEndian
	case 2:
		h.order = binary.BigEndian
	default:
		return nil, fmt.Errorf("unknown ELF data encoding %d", b[5])
	}
	if b[6] != 1 {
		return nil, fmt.Errorf("unknown ELF version %d", b[6])
	}
	o := h.order
	h.typ = o.Uint16(b[16:])
	h.machine = o.Uint16(b[18:])
	h.version = o.Uint32(b[20:])
	h.entry = o.Uint64(b[24:])
	h.phoff = o.Uint64(b[32:])
	h.shoff = o.Uint64(b[40:])
	h.flags = o.Uint32(b[48:])
	h.ehsize = o.Uint16(b[52:])
	h.phentsize = o.Uint16(b[54:])
	h.phnum = o.Uint16(b[56:])
	h.shentsize = o.Uint16(b[58:])
	h.shnum = o.Uint16(b[60:])
	h.shstrndx = o.Uint16(b[62:])
	if h.ehsize != ehdrSize {
		return nil, fmt.Errorf("ELF header: e_ehsize %d, want %d", h.ehsize, ehdrSize)
	}
	if h.phnum == 0xffff {
		return nil, errors.New("ELF header: extended program header numbering (e_phnum 0xffff) is not supported")
	}
	if h.phnum > 0 {
		if h.phentsize != phdrSize {
			return nil, fmt.Errorf("ELF header: e_phentsize %d, want %d", h.phentsize, phdrSize)
		}
		pb, err := readFull(r, size, h.phoff, uint64(h.phnum)*phdrSize, "program header table")
		if err != nil {
			return nil, err
		}
		f.progs = make([]prog, h.phnum)
		for i := range f.progs {
			f.progs[i] = decodeProg(o, pb[i*phdrSize:])
		}
	}
	if err := f.readSections(r); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// readSections reads the section header table (with extended numbering)
// and the section-name table.
func (f *file) readSections(r io.ReaderAt) error {
	h := &f.hdr
	o := h.order
	if h.shoff == 0 {
		if h.shnum != 0 {
			return fmt.Errorf("ELF header: e_shnum %d with e_shoff 0", h.shnum)
		}
		return nil
	}
	if h.shentsize != shdrSize {
		return fmt.Errorf("ELF header: e_shentsize %d, want %d", h.shentsize, shdrSize)
	}
	b0, err := readFull(r, f.size, h.shoff, shdrSize, "section header 0")
	if err != nil {
		return err
	}
	s0 := decodeSect(o, b0)
	n := uint64(h.shnum)
	if n == 0 {
		n = s0.Size
	}
	if n > uint64(f.size)/shdrSize {
		return fmt.Errorf("section header table: %d entries at offset %#x do not fit in the file (%#x bytes)", n, h.shoff, f.size)
	}
	sb, err := readFull(r, f.size, h.shoff, n*shdrSize, "section header table")
	if err != nil {
		return err
	}
	f.sects = make([]sect, n)
	for i := range f.sects {
		f.sects[i] = decodeSect(o, sb[i*shdrSize:])
	}
	idx := uint64(h.shstrndx)
	if idx == shnXindex {
		idx = uint64(s0.Link)
	}
	if idx == 0 {
		return nil
	}
	if idx >= n {
		return fmt.Errorf("section-name table index %d out of range (%d sections)", idx, n)
	}
	st := &f.sects[idx]
	if st.Type != shtStrtab {
		return fmt.Errorf("section-name table (section %d) has type %#x, want SHT_STRTAB", idx, st.Type)
	}
	f.shstrtab, err = readFull(r, f.size, st.Off, st.Size, "section-name table")
	if err != nil {
		return fmt.Errorf("section %d: %w", idx, err)
	}
	f.shstrndx = int(idx)
	return nil
}

// check validates the ranges of every program and section header.
func (f *file) check() error {
	sz := uint64(f.size)
	for i := range f.progs {
		p := &f.progs[i]
		if p.Filesz > 0 && (p.Off > sz || p.Filesz > sz-p.Off) {
			return fmt.Errorf("program header %d (%s) at offset %#x size %#x extends past end of file (%#x bytes)", i, progName(p.Type), p.Off, p.Filesz, sz)
		}
		if p.Type != ptLoad {
			continue
		}
		if p.Filesz > p.Memsz {
			return fmt.Errorf("program header %d (LOAD): p_filesz %#x > p_memsz %#x", i, p.Filesz, p.Memsz)
		}
		if p.Memsz > ^uint64(0)-p.Vaddr {
			return fmt.Errorf("program header %d (LOAD): address range overflows", i)
		}
		if p.Align > 1 {
			if p.Align&(p.Align-1) != 0 || p.Align > maxAlign {
				return fmt.Errorf("program header %d (LOAD): p_align %#x is not a power of two up to %#x", i, p.Align, maxAlign)
			}
			if (p.Off-p.Vaddr)&(p.Align-1) != 0 {
				return fmt.Errorf("program header %d (LOAD): p_offset %#x and p_vaddr %#x differ modulo p_align %#x", i, p.Off, p.Vaddr, p.Align)
			}
		}
	}
	for i := range f.sects {
		s := &f.sects[i]
		if s.Addralign&(s.Addralign-1) != 0 || s.Addralign > maxAlign {
			return fmt.Errorf("section %d (%s): sh_addralign %#x is not a power of two up to %#x", i, f.name(s), s.Addralign, maxAlign)
		}
		if s.hasContent() && (s.Off > sz || s.Size > sz-s.Off) {
			return fmt.Errorf("section %d (%s) at offset %#x size %#x extends past end of file (%#x bytes)", i, f.name(s), s.Off, s.Size, sz)
		}
		// A dangling section index would name the section we append.
		n := uint64(len(f.sects))
		if linksSection(s.Type) && uint64(s.Link) >= n {
			return fmt.Errorf("section %d (%s): sh_link %d is not a section index (%d sections)", i, f.name(s), s.Link, n)
		}
		if (s.Type == shtRel || s.Type == shtRela || s.Flags&shfInfoLink != 0) && uint64(s.Info) >= n {
			return fmt.Errorf("section %d (%s): sh_info %d is not a section index (%d sections)", i, f.name(s), s.Info, n)
		}
		// The SFrame section we replace must look like one by name, type
		// and flags alike: never overwrite code or data that only one of
		// them points at.
		named := f.nameIs(s, nameSFrame)
		switch {
		case f.shstrtab == nil:
			// No section-name table (e_shstrndx 0): nothing has a name,
			// the type alone says which section is SFrame.
		case s.Type == shtGNUSFrame && !named:
			return fmt.Errorf("section %d (%s) has type SHT_GNU_SFRAME but is not named %s", i, f.name(s), nameSFrame)
		case named && s.Type != shtGNUSFrame && s.Type != shtProgbits:
			return fmt.Errorf("section %d (%s) has type %#x, not SHT_GNU_SFRAME or SHT_PROGBITS", i, nameSFrame, s.Type)
		case named && s.Flags&(shfWrite|shfExecinstr) != 0:
			return fmt.Errorf("section %d (%s) is writable or executable (sh_flags %#x)", i, nameSFrame, s.Flags)
		}
	}
	return f.checkOverlaps()
}

// checkOverlaps refuses sections whose file contents overlap each other or
// the ELF header and header tables: elfpatch rewrites the headers and the
// symbol tables in place, and bytes two sections claim would change under
// the other one.
func (f *file) checkOverlaps() error {
	// An extent is a section (its index), or one of the tables (what
	// names them, below 0); the message is made only for an overlap.
	const ehdr, phdrs, shdrs = -1, -2, -3
	type extent struct {
		start, end uint64
		what       int
	}
	xs := make([]extent, 0, len(f.sects)+3)
	xs = append(xs, extent{0, ehdrSize, ehdr})
	if n := uint64(len(f.progs)); n > 0 {
		xs = append(xs, extent{f.hdr.phoff, f.hdr.phoff + n*phdrSize, phdrs})
	}
	if n := uint64(len(f.sects)); n > 0 && f.hdr.shoff != 0 {
		xs = append(xs, extent{f.hdr.shoff, f.hdr.shoff + n*shdrSize, shdrs})
	}
	for i := range f.sects {
		if s := &f.sects[i]; s.hasContent() {
			xs = append(xs, extent{s.Off, s.Off + s.Size, i})
		}
	}
	name := func(what int) string {
		switch what {
		case ehdr:
			return "the ELF header"
		case phdrs:
			return "the program header table"
		case shdrs:
			return "the section header table"
		}
		return fmt.Sprintf("section %d (%s)", what, f.name(&f.sects[what]))
	}
	slices.SortStableFunc(xs, func(a, b extent) int { return cmp.Compare(a.start, b.start) })
	// Sorted by start, an extent overlaps an earlier one exactly when it
	// starts before the furthest end seen so far.
	far := 0
	for k := 1; k < len(xs); k++ {
		if xs[k].start < xs[far].end {
			return fmt.Errorf("%s (file offsets %#x-%#x) overlaps %s (%#x-%#x)", name(xs[k].what), xs[k].start, xs[k].end, name(xs[far].what), xs[far].start, xs[far].end)
		}
		if xs[k].end > xs[far].end {
			far = k
		}
	}
	return nil
}

// linksSection reports whether sh_link of a section of type t is a section
// index (gABI, GNU extensions).
func linksSection(t uint32) bool {
	switch t {
	case shtSymtab, shtRela, shtRel, shtGroup, shtSymtabShndx,
		5 /* SHT_HASH */, 6 /* SHT_DYNAMIC */, 11, /* SHT_DYNSYM */
		0x6ffffff6 /* SHT_GNU_HASH */, 0x6ffffffd /* SHT_GNU_verdef */, 0x6ffffffe /* SHT_GNU_verneed */, 0x6fffffff /* SHT_GNU_versym */ :
		return true
	}
	return false
}

// name returns the name of s, or "?" if it cannot be read.
func (f *file) name(s *sect) string {
	if uint64(s.Name) >= uint64(len(f.shstrtab)) {
		return "?"
	}
	b := f.shstrtab[s.Name:]
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return "?"
}

// nameIs reports whether s is named name, a name without NUL (f.name(s)
// == name, without making a string of every section's name).
func (f *file) nameIs(s *sect, name string) bool {
	if uint64(s.Name) >= uint64(len(f.shstrtab)) {
		return false
	}
	b := f.shstrtab[s.Name:]
	return len(b) > len(name) && string(b[:len(name)]) == name && b[len(name)] == 0
}

// findName returns the offset in the section-name table of a NUL-terminated
// string equal to name (possibly the tail of a longer one), or -1.
func findName(tab []byte, name string) int {
	want := name + "\x00"
	for i := 0; i+len(want) <= len(tab); i++ {
		if string(tab[i:i+len(want)]) == want {
			return i
		}
	}
	return -1
}

func decodeProg(o binary.ByteOrder, b []byte) prog {
	return prog{
		Type: o.Uint32(b[0:]), Flags: o.Uint32(b[4:]),
		Off: o.Uint64(b[8:]), Vaddr: o.Uint64(b[16:]), Paddr: o.Uint64(b[24:]),
		Filesz: o.Uint64(b[32:]), Memsz: o.Uint64(b[40:]), Align: o.Uint64(b[48:]),
	}
}

func encodeProg(o binary.ByteOrder, b []byte, p *prog) {
	o.PutUint32(b[0:], p.Type)
	o.PutUint32(b[4:], p.Flags)
	o.PutUint64(b[8:], p.Off)
	o.PutUint64(b[16:], p.Vaddr)
	o.PutUint64(b[24:], p.Paddr)
	o.PutUint64(b[32:], p.Filesz)
	o.PutUint64(b[40:], p.Memsz)
	o.PutUint64(b[48:], p.Align)
}

func decodeSect(o binary.ByteOrder, b []byte) sect {
	return sect{
		Name: o.Uint32(b[0:]), Type: o.Uint32(b[4:]),
		Flags: o.Uint64(b[8:]), Addr: o.Uint64(b[16:]), Off: o.Uint64(b[24:]), Size: o.Uint64(b[32:]),
		Link: o.Uint32(b[40:]), Info: o.Uint32(b[44:]),
		Addralign: o.Uint64(b[48:]), Entsize: o.Uint64(b[56:]),
	}
}

func encodeSect(o binary.ByteOrder, b []byte, s *sect) {
	o.PutUint32(b[0:], s.Name)
	o.PutUint32(b[4:], s.Type)
	o.PutUint64(b[8:], s.Flags)
	o.PutUint64(b[16:], s.Addr)
	o.PutUint64(b[24:], s.Off)
	o.PutUint64(b[32:], s.Size)
	o.PutUint32(b[40:], s.Link)
	o.PutUint32(b[44:], s.Info)
	o.PutUint64(b[48:], s.Addralign)
	o.PutUint64(b[56:], s.Entsize)
}

// encodeHeader writes the ELF header h into b (64 bytes).
func encodeHeader(b []byte, h *header) {
	o := h.order
	copy(b, h.ident[:])
	o.PutUint16(b[16:], h.typ)
	o.PutUint16(b[18:], h.machine)
	o.PutUint32(b[20:], h.version)
	o.PutUint64(b[24:], h.entry)
	o.PutUint64(b[32:], h.phoff)
	o.PutUint64(b[40:], h.shoff)
	o.PutUint32(b[48:], h.flags)
	o.PutUint16(b[52:], h.ehsize)
	o.PutUint16(b[54:], h.phentsize)
	o.PutUint16(b[56:], h.phnum)
	o.PutUint16(b[58:], h.shentsize)
	o.PutUint16(b[60:], h.shnum)
	o.PutUint16(b[62:], h.shstrndx)
}

// encodeSects returns the section header table bytes for sects and sets the
// header's section count and name-table index, using extended numbering
// (count in section 0's sh_size, index in its sh_link) when needed.
func encodeSects(h *header, sects []sect, shstrndx int) []byte {
	// Entry 0 holds nothing but the extended numbering fields (gABI);
	// whatever else a broken input had there is not kept: a stray
	// SHF_COMPRESSED flag, say, makes readers look for a compression
	// header in a section of size 0.
	sects[0] = sect{}
	if len(sects) >= shnLoreserve {
		sects[0].Size = uint64(len(sects))
		h.shnum = 0
	} else {
		sects[0].Size = 0
		h.shnum = uint16(len(sects))
	}
	if shstrndx >= shnLoreserve {
		sects[0].Link = uint32(shstrndx)
		h.shstrndx = shnXindex
	} else {
		sects[0].Link = 0
		h.shstrndx = uint16(shstrndx)
	}
	b := make([]byte, len(sects)*shdrSize)
	for i := range sects {
		encodeSect(h.order, b[i*shdrSize:], &sects[i])
	}
	return b
}

func progName(t uint32) string {
	switch t {
	case ptNull:
		return "NULL"
	case ptLoad:
		return "LOAD"
	case 2:
		return "DYNAMIC"
	case 3:
		return "INTERP"
	case 4:
		return "NOTE"
	case ptPhdr:
		return "PHDR"
	case 7:
		return "TLS"
	case ptGNUEHFrame:
		return "GNU_EH_FRAME"
	case ptGNUStack:
		return "GNU_STACK"
	case ptGNURelro:
		return "GNU_RELRO"
	case ptGNUProperty:
		return "GNU_PROPERTY"
	case ptGNUSFrame:
		return "GNU_SFRAME"
	}
	return fmt.Sprintf("%#x", t)
}

func alignUp(x, a uint64) uint64 {
	if a <= 1 {
		return x
	}
	return (x + a - 1) &^ (a - 1)
}

// MaxObjectSize is the largest relocatable object PatchObject patches: it
// rewrites the object in memory.
const MaxObjectSize = maxTableBytes * 4
