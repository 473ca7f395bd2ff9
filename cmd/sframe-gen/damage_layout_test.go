package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"math/rand"
	"sort"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// The layout of a sound ELF64 file and the helpers the mutators of
// damage_mutators_test.go break it with.

// elfLayout is what the mutators need to know about the sound file.
type elfLayout struct {
	bo                   binary.ByteOrder
	phoff, shoff         uint64
	phentsize, phnum     int
	shentsize, shnum     int
	secs                 []secLayout // by section index
	frames               *cfi.Frames // .eh_frame (or .debug_frame), nil if none
	framesSec            int         // its section index
	relocatable, dynamic bool
}

// secLayout is one section header's position and extent.
type secLayout struct {
	name         string
	typ          elf.SectionType
	offset, size uint64
	hdr          uint64 // file offset of the section header
}

func (s secLayout) hasData() bool {
	return s.typ != elf.SHT_NOBITS && s.typ != elf.SHT_NULL && s.size > 0
}

func layoutOf(data []byte) (*elfLayout, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	bo := f.ByteOrder
	l := &elfLayout{
		bo:          bo,
		phoff:       bo.Uint64(data[0x20:]),
		shoff:       bo.Uint64(data[0x28:]),
		phentsize:   int(bo.Uint16(data[0x36:])),
		phnum:       int(bo.Uint16(data[0x38:])),
		shentsize:   int(bo.Uint16(data[0x3a:])),
		shnum:       int(bo.Uint16(data[0x3c:])),
		relocatable: f.Type == elf.ET_REL,
		dynamic:     f.Type == elf.ET_DYN,
	}
	for i, s := range f.Sections {
		l.secs = append(l.secs, secLayout{name: s.Name, typ: s.Type, offset: s.Offset, size: s.Size,
			hdr: l.shoff + uint64(i*l.shentsize)})
	}
	if fr, err := cfi.Read(f, cfi.Auto); err == nil {
		l.frames = fr
		l.framesSec = l.index(fr.Name)
	}
	return l, nil
}

// index returns the index of the section named name, or -1.
func (l *elfLayout) index(name string) int {
	for i, s := range l.secs {
		if s.name == name {
			return i
		}
	}
	return -1
}

// dataSecs returns the indices of the sections with file contents.
func (l *elfLayout) dataSecs() []int {
	var out []int
	for i, s := range l.secs {
		if s.hasData() {
			out = append(out, i)
		}
	}
	return out
}

// mutator breaks one thing in d (a copy of the sound file) and returns the
// damaged bytes, or nil when it does not apply to this file.
type mutator struct {
	kind string
	// n is how many variants to make per base file (times the long factor).
	n   int
	fn  func(r *rand.Rand, d []byte, l *elfLayout) []byte
	doc string
}

func flipBits(r *rand.Rand, d []byte, lo, hi uint64, maxFlips int) []byte {
	if hi > uint64(len(d)) {
		hi = uint64(len(d))
	}
	if lo >= hi {
		return nil
	}
	for n := 1 + r.Intn(maxFlips); n > 0; n-- {
		p := lo + uint64(r.Int63n(int64(hi-lo)))
		d[p] ^= 1 << r.Intn(8)
	}
	return d
}

func truncAt(r *rand.Rand, d []byte, lo, hi uint64) []byte {
	if hi > uint64(len(d)) {
		hi = uint64(len(d))
	}
	if lo >= hi {
		return nil
	}
	return d[:lo+uint64(r.Int63n(int64(hi-lo)))]
}

// secData returns the bounds of section i's contents, or ok false.
func secData(l *elfLayout, i int) (lo, hi uint64, ok bool) {
	if i < 0 || i >= len(l.secs) || !l.secs[i].hasData() {
		return 0, 0, false
	}
	s := l.secs[i]
	return s.offset, s.offset + s.size, true
}

func pick(r *rand.Rand, xs []int) int {
	if len(xs) == 0 {
		return -1
	}
	return xs[r.Intn(len(xs))]
}

// pickU64 returns one of vs.
func pickU64(r *rand.Rand, vs ...uint64) uint64 { return vs[r.Intn(len(vs))] }

// Section header field offsets (Elf64_Shdr).
const (
	shType   = 0x04
	shFlags  = 0x08
	shOffset = 0x18
	shSize   = 0x20
	shLink   = 0x28
	shInfo   = 0x2c
	shAlign  = 0x30
	shEnt    = 0x38
)

// Program header field offsets (Elf64_Phdr).
const (
	phType   = 0x00
	phOffset = 0x08
	phVaddr  = 0x10
	phFilesz = 0x20
	phMemsz  = 0x28
	phAlign  = 0x30
)

func (l *elfLayout) putShdr(d []byte, i int, field int, v uint64) []byte {
	if i < 0 || i >= len(l.secs) {
		return nil
	}
	p := l.secs[i].hdr + uint64(field)
	width := uint64(8)
	if field == shType || field == shLink || field == shInfo {
		width = 4
	}
	if p+width > uint64(len(d)) {
		return nil
	}
	if width == 4 {
		l.bo.PutUint32(d[p:], uint32(v))
	} else {
		l.bo.PutUint64(d[p:], v)
	}
	return d
}

func (l *elfLayout) putPhdr(d []byte, i int, field int, v uint64) []byte {
	if i < 0 || i >= l.phnum || l.phentsize < 0x38 {
		return nil
	}
	p := l.phoff + uint64(i*l.phentsize) + uint64(field)
	if p+8 > uint64(len(d)) {
		return nil
	}
	if field == phType {
		l.bo.PutUint32(d[p:], uint32(v))
	} else {
		l.bo.PutUint64(d[p:], v)
	}
	return d
}

// cfiSec returns the index of the CFI section the CLI reads, or -1.
func (l *elfLayout) cfiSec() int {
	if l.frames == nil {
		return -1
	}
	return l.framesSec
}

// entryBounds returns the section offsets [start, end) of every CIE and FDE.
func (l *elfLayout) entries() [][2]uint64 {
	if l.frames == nil {
		return nil
	}
	var out [][2]uint64
	sec := l.secs[l.framesSec]
	for _, c := range l.frames.CIEs {
		out = append(out, [2]uint64{c.Offset, c.InitialOffset + uint64(len(c.Initial))})
	}
	for _, f := range l.frames.FDEs {
		out = append(out, [2]uint64{f.Offset, f.InstructionsOffset + uint64(len(f.Instructions))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	for i := range out {
		out[i][0] += sec.offset
		out[i][1] += sec.offset
	}
	return out
}

// uleb encodes v as a ULEB128 of exactly n bytes (n >= the minimal length).
func ulebN(v uint64, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i++ {
		b[i] = byte(v&0x7f) | 0x80
		v >>= 7
	}
	b[n-1] &^= 0x80
	return b
}

// putInstrs overwrites the start of a random FDE's (or CIE's) instructions
// with code, when it fits.
func putInstrs(r *rand.Rand, d []byte, l *elfLayout, code []byte) []byte {
	if l.frames == nil {
		return nil
	}
	base := l.secs[l.framesSec].offset
	type span struct{ off, n uint64 }
	var fits []span
	for _, f := range l.frames.FDEs {
		if uint64(len(f.Instructions)) >= uint64(len(code)) {
			fits = append(fits, span{f.InstructionsOffset, uint64(len(f.Instructions))})
		}
	}
	for _, c := range l.frames.CIEs {
		if uint64(len(c.Initial)) >= uint64(len(code)) {
			fits = append(fits, span{c.InitialOffset, uint64(len(c.Initial))})
		}
	}
	if len(fits) == 0 {
		return nil
	}
	s := fits[r.Intn(len(fits))]
	copy(d[base+s.off:], code)
	return d
}

// cieFields returns the file offsets of a CIE's version byte, augmentation
// string and, for a "z" augmentation, the R (FDE pointer encoding) byte
// (0 when absent).
func cieFields(d []byte, l *elfLayout, c *cfi.CIE) (version, aug, rByte uint64) {
	p := l.secs[l.framesSec].offset + c.Offset + 4
	if c.Format64 {
		p += 8 + 8
	} else {
		p += 4
	}
	version = p
	aug = p + 1
	q := aug
	for q < uint64(len(d)) && d[q] != 0 {
		q++
	}
	q++
	if c.Version == 4 {
		q += 2
	}
	skipLEB := func() {
		for q < uint64(len(d)) && d[q]&0x80 != 0 {
			q++
		}
		q++
	}
	skipLEB() // code alignment
	skipLEB() // data alignment
	if c.Version == 1 {
		q++
	} else {
		skipLEB()
	}
	if len(c.Augmentation) == 0 || c.Augmentation[0] != 'z' {
		return version, aug, 0
	}
	skipLEB() // augmentation data length
	for _, ch := range c.Augmentation[1:] {
		switch ch {
		case 'R':
			return version, aug, q
		case 'L':
			q++
		case 'P':
			enc := d[q]
			q++
			switch enc & 0x0f {
			case 0x02, 0x0a:
				q += 2
			case 0x03, 0x0b:
				q += 4
			default:
				q += 8
			}
		}
	}
	return version, aug, 0
}
