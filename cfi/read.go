package cfi

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

// ErrNoCFI is the error for a file without call-frame information: the
// errors of Read and Open for a file with no CFI section to read wrap it
// (and say which section is missing), and so do the other packages' errors
// for the same condition (sframegen.ErrNoCFI is this value).
var ErrNoCFI = errors.New("no call-frame information")

// noSectionError is ErrNoCFI for a file with neither CFI section, said as
// such.
type noSectionError struct{}

func (noSectionError) Error() string { return "no .eh_frame or .debug_frame section" }
func (noSectionError) Unwrap() error { return ErrNoCFI }

// Read reads the CIEs and FDEs of f's .eh_frame or .debug_frame section,
// as src selects. Problems with single entries are collected in
// Frames.Errors and do not stop the read; the error result is only for a
// file where nothing can be read (no such section, unreadable data).
//
// Pointer bases: DW_EH_PE_pcrel is relative to the field's address,
// DW_EH_PE_textrel to the .text section, DW_EH_PE_datarel to the .got
// section (0 without one), DW_EH_PE_funcrel to the FDE's start.
// DW_EH_PE_indirect pointers are read from the file's allocated sections
// (not followed in relocatable objects).
func Read(f *elf.File, src Source) (*Frames, error) {
	fr, err := Open(f, src)
	if err != nil {
		return nil, err
	}
	fr.readAll()
	return fr, nil
}

// Open reads f's CFI section as Read does, but none of its entries: the
// Frames has no CIEs, FDEs or Errors yet. Its Scanners read the entries
// one at a time, for a caller that does not need them all at once (and
// the memory they take: 88 bytes per FDE).
func Open(f *elf.File, src Source) (*Frames, error) {
	return open(f, src, nil)
}

// OpenMapped is Open for a caller that holds the whole file in memory,
// typically mapped: the section's bytes are those of file at its offset,
// not read into a copy (a compressed section is inflated into memory of
// its own, as Open does). The Frames aliases file.
func OpenMapped(f *elf.File, src Source, file []byte) (*Frames, error) {
	if file == nil {
		file = []byte{}
	}
	return open(f, src, file)
}

// open is Open, or OpenMapped when file is not nil.
func open(f *elf.File, src Source, file []byte) (*Frames, error) {
	sec, which, err := findSection(f, src)
	if err != nil {
		return nil, err
	}
	var data []byte
	if file != nil && sec.Flags&elf.SHF_COMPRESSED == 0 && !strings.HasPrefix(sec.Name, ".zdebug") {
		if sec.Offset > uint64(len(file)) || sec.Size > uint64(len(file))-sec.Offset {
			return nil, fmt.Errorf("%s (file offset %#x, size %#x) runs past the end of the file (%w)", sec.Name, sec.Offset, sec.Size, io.ErrUnexpectedEOF)
		}
		data = file[sec.Offset : sec.Offset+sec.Size : sec.Offset+sec.Size]
	} else if data, err = sectionData(sec); err != nil {
		return nil, err
	}
	name := ".eh_frame"
	if which == DebugFrame {
		name = ".debug_frame"
	}
	ptr := PointerContext{
		Order:       f.ByteOrder,
		AddrSize:    addrSize(f),
		SectionAddr: sec.Addr,
	}
	if s := f.Section(".text"); s != nil {
		ptr.TextAddr = s.Addr
	}
	if s := f.Section(".got"); s != nil {
		ptr.DataAddr = s.Addr
	}
	rel := f.Type == elf.ET_REL
	if rel {
		ptr.rel, err = relocations(f, sec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	} else {
		ptr.Indirect = indirectReader(f)
	}
	fr := newFrames(data, name, which, ptr)
	fr.Address = sec.Addr
	fr.Relocatable = rel
	if file != nil && which == EHFrame {
		fr.index = findFDEIndex(f, file, sec)
	}
	return fr, nil
}

// ReadSection reads CFI section bytes without an ELF file around them: a
// linked file's section at address ptr.SectionAddr (its relative pointers
// decoded against ptr's bases). src must be EHFrame or DebugFrame.
func ReadSection(data []byte, src Source, ptr PointerContext) (*Frames, error) {
	if src != EHFrame && src != DebugFrame {
		return nil, fmt.Errorf("ReadSection needs EHFrame or DebugFrame, not %v", src)
	}
	if ptr.Order == nil {
		return nil, errors.New("ReadSection needs a byte order")
	}
	if ptr.AddrSize != 4 && ptr.AddrSize != 8 {
		return nil, fmt.Errorf("address size %d not supported", ptr.AddrSize)
	}
	ptr.rel = nil
	fr := newFrames(data, src.String(), src, ptr)
	fr.Address = ptr.SectionAddr
	fr.readAll()
	return fr, nil
}

// sectionData reads sec's contents. A compressed section is first checked
// against its claimed size (checkCompressedSize), then inflated into one
// buffer of that size. A section running past the end of the file is
// reported as such, not as a bare "unexpected EOF".
func sectionData(sec *elf.Section) ([]byte, error) {
	size, compressed, err := checkCompressedSize(sec)
	if err != nil {
		return nil, err
	}
	var data []byte
	if compressed {
		data = make([]byte, size)
		_, err = io.ReadFull(sec.Open(), data)
	} else {
		data, err = sec.Data()
	}
	switch {
	case err == nil:
		return data, nil
	case compressed && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return nil, fmt.Errorf("%s: compressed data ends before the %d bytes its header claims (%w)", sec.Name, size, err)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%s (file offset %#x, size %#x) runs past the end of the file (%w)", sec.Name, sec.Offset, sec.FileSize, err)
	}
	return nil, fmt.Errorf("%s: %w", sec.Name, err)
}

// MaxSectionBytes is the most a CFI section may take in memory once read:
// a compressed section claiming more is refused before it is inflated.
const MaxSectionBytes = 1 << 32

// SectionBytes returns the bytes the CFI section src selects takes in
// memory once Read or Open has read it: its size, or for a compressed
// section the uncompressed size its header claims, which inflating it
// never exceeds (a stream claiming less than it holds is cut there).
// It fails as Open would on a claim over MaxSectionBytes or compressed
// bytes missing from the file. A caller with a memory budget checks the
// size against it before reading: no fixed compression ratio tells a bomb
// from real CFI (gcc -gz compresses the .debug_frame of an object of
// 20,000 small functions 338 to 1: its FDEs differ only in relocations).
func SectionBytes(f *elf.File, src Source) (uint64, error) {
	sec, _, err := findSection(f, src)
	if err != nil {
		return 0, err
	}
	size, compressed, err := checkCompressedSize(sec)
	if err == nil && !compressed && size > 0 && !rawBytesThere(sec) {
		err = fmt.Errorf("%s (file offset %#x, size %#x) runs past the end of the file", sec.Name, sec.Offset, sec.FileSize)
	}
	return size, err
}

// checkCompressedSize returns the uncompressed size of sec and whether it
// is compressed (SHF_COMPRESSED, or the old .zdebug "ZLIB" form), and
// refuses a section claiming over MaxSectionBytes or whose compressed
// bytes are not all in the file.
func checkCompressedSize(sec *elf.Section) (uint64, bool, error) {
	size := sec.Size
	switch {
	case sec.Flags&elf.SHF_COMPRESSED != 0:
	case strings.HasPrefix(sec.Name, ".zdebug"):
		// debug/elf reads the size from the "ZLIB" header when it opens
		// the section: read it first.
		var hdr [12]byte
		if n, _ := sec.ReadAt(hdr[:], 0); n != 12 || string(hdr[:4]) != "ZLIB" {
			return size, false, nil
		}
		size = binary.BigEndian.Uint64(hdr[4:])
	default:
		return size, false, nil
	}
	if size > MaxSectionBytes {
		return 0, true, fmt.Errorf("%s: compressed section claims %d bytes from %d, over %d", sec.Name, size, sec.FileSize, uint64(MaxSectionBytes))
	}
	// A claim is only worth inflating if the compressed bytes are there.
	if sec.FileSize > 0 && !rawBytesThere(sec) {
		return 0, true, fmt.Errorf("%s (file offset %#x, size %#x) runs past the end of the file", sec.Name, sec.Offset, sec.FileSize)
	}
	return size, true, nil
}

// rawBytesThere reports whether the file holds sec's last stored byte
// (debug/elf gives no random access to a compressed section's raw bytes:
// a copy of its header without the flag and the .zdebug name does).
func rawBytesThere(sec *elf.Section) bool {
	if sec.FileSize > math.MaxInt64 {
		return false
	}
	raw := *sec
	raw.Flags &^= elf.SHF_COMPRESSED
	raw.Name = ""
	r := raw.Open()
	if _, err := r.Seek(int64(sec.FileSize-1), io.SeekStart); err != nil {
		return false
	}
	var last [1]byte
	n, _ := r.Read(last[:])
	return n == 1
}

func addrSize(f *elf.File) int {
	if f.Class == elf.ELFCLASS32 {
		return 4
	}
	return 8
}

// findSection picks the CFI section src names.
func findSection(f *elf.File, src Source) (*elf.Section, Source, error) {
	usable := func(s *elf.Section) bool { return s != nil && s.Type != elf.SHT_NOBITS }
	eh := f.Section(".eh_frame")
	dbg := f.Section(".debug_frame")
	if !usable(dbg) {
		dbg = f.Section(".zdebug_frame")
	}
	switch src {
	case EHFrame:
		if usable(eh) {
			return eh, EHFrame, nil
		}
		return nil, 0, errors.New("no .eh_frame section")
	case DebugFrame:
		if usable(dbg) {
			return dbg, DebugFrame, nil
		}
		return nil, 0, fmt.Errorf("no .debug_frame section: %w", noSectionError{})
	case Auto:
		if usable(eh) && eh.Size > 0 {
			return eh, EHFrame, nil
		}
		if usable(dbg) {
			return dbg, DebugFrame, nil
		}
		if usable(eh) {
			return eh, EHFrame, nil
		}
		return nil, 0, noSectionError{}
	}
	return nil, 0, fmt.Errorf("unknown CFI source %d", int(src))
}

// indirectReader returns the DW_EH_PE_indirect reader of a linked file:
// it reads a pointer from the allocated section holding the address. It
// is safe for concurrent use (the Scanners of one section share it).
func indirectReader(f *elf.File) func(uint64) (uint64, error) {
	var mu sync.Mutex
	cache := map[*elf.Section][]byte{}
	size := uint64(addrSize(f))
	return func(addr uint64) (uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || addr < s.Addr || addr-s.Addr >= s.Size || s.Size-(addr-s.Addr) < size {
				continue
			}
			d, ok := cache[s]
			if !ok {
				var err error
				if d, err = s.Data(); err != nil {
					return 0, fmt.Errorf("reading %s: %w", s.Name, err)
				}
				cache[s] = d
			}
			o := addr - s.Addr
			if o+size > uint64(len(d)) {
				break
			}
			if size == 4 {
				return uint64(f.ByteOrder.Uint32(d[o:])), nil
			}
			return f.ByteOrder.Uint64(d[o:]), nil
		}
		return 0, errors.New("address not in a loaded section of the file")
	}
}

// parser walks one CFI section, or part of it: fr receives the CIEs and
// the errors of the entries it reads.
type parser struct {
	data  []byte
	name  string
	eh    bool
	order binary.ByteOrder
	big   bool // order is big-endian: u32 and u64 avoid interface calls
	ptr   PointerContext
	fr    *Frames

	cies    map[uint64]*cieResult
	lastOff uint64
	last    *cieResult
}

type cieResult struct {
	cie *CIE
	err error
}

// newFrames returns the Frames of a CFI section, its entries not read.
func newFrames(data []byte, name string, src Source, ptr PointerContext) *Frames {
	return &Frames{Source: src, Name: name, Order: ptr.Order, Data: data, ptr: ptr, big: isBigEndian(ptr.Order)}
}

// newParser returns a parser of fr's section that records CIEs and errors
// in into (fr itself, or a Scanner's).
func newParser(fr, into *Frames) *parser {
	return &parser{
		data:  fr.Data,
		name:  fr.Name,
		eh:    fr.Source == EHFrame,
		order: fr.Order,
		big:   fr.big,
		ptr:   fr.ptr,
		fr:    into,
		cies:  map[uint64]*cieResult{},
	}
}

// readAll reads every entry of fr's section into its CIEs, FDEs and
// Errors.
func (fr *Frames) readAll() {
	p := newParser(fr, fr)
	// Real FDEs take 24 to 64 bytes: a list of len/32 pointers (a quarter
	// of the section's size) rarely has to grow.
	fr.FDEs = make([]*FDE, 0, len(fr.Data)/32)
	// FDEs are allocated in blocks: one allocation per 1024 FDEs.
	var slab []FDE
	for off := 0; off < len(p.data); {
		h, next, fde := p.entry(off)
		off = next
		if !fde {
			continue
		}
		if len(slab) == 0 {
			slab = make([]FDE, 1024)
		}
		if err := p.parseFDE(&h, &slab[0]); err != nil {
			p.fail(h.off, err)
			slab[0] = FDE{}
			continue
		}
		fr.FDEs = append(fr.FDEs, &slab[0])
		slab = slab[1:]
	}
}

// header is the length and CIE id/pointer of one entry.
type header struct {
	off      uint64 // section offset of the entry
	idOff    int    // section offset of the CIE id / pointer field
	body     int    // section offset after the id field
	end      int    // section offset after the entry
	format64 bool
	id       uint64
}

// errStop is returned by readHeader when the walk cannot go on.
type stopError struct{ error }

// readHeader reads the entry header at off. A zero terminator (4 bytes)
// gives h.end == 0 and a nil error.
func (p *parser) readHeader(off int) (h header, next int, err error) {
	data := p.data
	if len(data)-off < 4 {
		return h, len(data), stopError{fmt.Errorf("%d bytes left: too short for a length field", len(data)-off)}
	}
	length := uint64(p.u32(data[off:]))
	h.off = uint64(off)
	pos := off + 4
	switch {
	case length == 0:
		return h, pos, nil
	case length == 0xffffffff:
		if len(data)-pos < 8 {
			return h, len(data), stopError{errors.New("64-bit length field runs past the end of the section")}
		}
		length = p.u64(data[pos:])
		pos += 8
		h.format64 = true
	case length >= 0xfffffff0:
		return h, len(data), stopError{fmt.Errorf("reserved length value %#x", length)}
	}
	if length > uint64(len(data)-pos) {
		return h, len(data), stopError{fmt.Errorf("length %#x runs past the end of the section (%#x bytes left)", length, len(data)-pos)}
	}
	h.end = pos + int(length)
	idSize := 4
	if h.format64 && !p.eh {
		idSize = 8
	}
	if h.end-pos < idSize {
		return h, h.end, fmt.Errorf("length %#x too short for the CIE id", length)
	}
	h.idOff = pos
	if idSize == 4 {
		h.id = uint64(p.u32(data[pos:]))
	} else {
		h.id = p.u64(data[pos:])
	}
	h.body = pos + idSize
	return h, h.end, nil
}

func (p *parser) isCIE(h *header) bool {
	if p.eh {
		return h.id == 0
	}
	if h.format64 {
		return h.id == 0xffffffffffffffff
	}
	return h.id == 0xffffffff
}

// entry reads the entry at off, in a walk of the section in order: it
// records a CIE, or the error of a broken entry, and returns the header of
// an FDE (fde true) for the caller to parse. next is where the next entry
// starts: len(p.data) when the walk cannot go on.
func (p *parser) entry(off int) (h header, next int, fde bool) {
	h, next, err := p.readHeader(off)
	if err != nil {
		p.fail(uint64(off), err)
		var stop stopError
		if errors.As(err, &stop) {
			return h, len(p.data), false
		}
		return h, next, false
	}
	if h.end == 0 {
		return h, next, false // zero terminator
	}
	if p.isCIE(&h) {
		r := p.cieAt(&h)
		if r.err != nil {
			p.fail(h.off, r.err)
		} else {
			p.fr.CIEs = append(p.fr.CIEs, r.cie)
		}
		return h, next, false
	}
	return h, next, true
}

func (p *parser) fail(off uint64, err error) {
	var stop stopError
	if errors.As(err, &stop) {
		err = stop.error
	}
	p.fr.Errors = append(p.fr.Errors, &EntryError{Section: p.name, Offset: off, Err: err})
}

// cieAt parses the CIE with header h, once.
func (p *parser) cieAt(h *header) *cieResult {
	if r, ok := p.cies[h.off]; ok {
		return r
	}
	cie, err := p.parseCIE(h)
	r := &cieResult{cie: cie, err: err}
	p.cies[h.off] = r
	return r
}

// lookupCIE finds the CIE an FDE's pointer names.
func (p *parser) lookupCIE(off uint64) (*CIE, error) {
	if off >= uint64(len(p.data)) {
		return nil, fmt.Errorf("CIE pointer to offset %#x, past the end of the section", off)
	}
	r := p.last
	if r == nil || p.lastOff != off {
		r = p.cieResultAt(off)
		p.last, p.lastOff = r, off
	}
	if r.err != nil {
		return nil, fmt.Errorf("CIE at offset %#x: %w", off, r.err)
	}
	return r.cie, nil
}

// cieResultAt parses the CIE an FDE's pointer names, once.
func (p *parser) cieResultAt(off uint64) *cieResult {
	r, ok := p.cies[off]
	if !ok {
		h, _, err := p.readHeader(int(off))
		switch {
		case err != nil:
			r = &cieResult{err: err}
		case h.end == 0:
			r = &cieResult{err: errors.New("a zero terminator")}
		case !p.isCIE(&h):
			r = &cieResult{err: errors.New("not a CIE")}
		default:
			r = p.cieAt(&h)
		}
		p.cies[off] = r
	}
	return r
}

func (p *parser) u32(b []byte) uint32 {
	if p.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (p *parser) u64(b []byte) uint64 {
	if p.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}
