package emit

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
)

// Reader answers a stack walker's question about an SFrame section: for a
// program counter, how to find the caller's frame. It decodes the section
// once (version 2 or 3, either byte order, functions sharing FRE blocks
// too) and then looks up PCs without allocating.
type Reader struct {
	sec  *Section
	addr uint64
	// fdes are the section's functions with their FREs, in index order
	// (Section.Functions).
	fdes []FDE
	// funcs are the functions in address order. A search starts in
	// bucket: bucket[b] is how many functions start below base+b<<shift,
	// so the function of a PC is among the few of its bucket (one table
	// read, then usually one cache line of funcs, instead of a binary
	// search's dozen dependent cache misses).
	funcs  []readerFunc
	base   uint64
	shift  uint
	bucket []uint32
	// fres holds each function's FREs, one function after the other in
	// address order, packed as narrow as they fit: first the starts
	// (1, 2 or 4 bytes each), then fixed-size records of the info byte,
	// the word count and the data words (1, 2 or 4 bytes each, as many as
	// the function's longest FRE has). A lookup reads one or two cache
	// lines of it; on libLLVM.so's section the table takes about a third
	// of what 20-byte FRE structs took.
	fres []byte
}

// readerFunc is what a lookup reads of one function.
type readerFunc struct {
	start       uint64 // absolute start address
	fde         int32  // index of the FDE in the section
	size        uint32 // the function's size
	fre         int    // offset of its FREs in Reader.fres
	numFRE      uint32
	info, info2 uint8 // the FDE's info bytes
	rep         uint8 // the repeat size of a PCMASK function
	// shape is how its FREs are packed: log2 of the start size (bits
	// 0-1), log2 of the data-word size (bits 2-3), the words per record
	// (bits 4-7).
	shape uint8
}

// maxWords returns the number of data words in each of f's FRE records.
func (f *readerFunc) maxWords() uint32 { return uint32(f.shape >> 4) }

// funcsPerBucket: the bucket table has at most len(funcs)/funcsPerBucket
// buckets (each a power of two bytes of addresses). On libLLVM.so's section
// (160,806 functions, 2.3 million shuffled PCs, testdata/bench-lookup.sh)
// 4 (a 160 KB table) and 1 measured the same, within the noise.
const funcsPerBucket = 4

// Func is one function of a section as Reader.Funcs gives it.
type Func struct {
	Start uint64 // absolute start address
	FDE   *FDE   // its FDE: size, type, FREs
	Index int    // its position in the section's FDE index
}

// Lookup is the answer to Reader.Lookup: the function and FRE that cover
// the PC, and what the FRE means.
type Lookup struct {
	Frame
	Func  int    // index of the FDE in the section
	FRE   int    // index of the FRE in the function
	Start uint64 // absolute start address of the function
}

// NewReader decodes an SFrame section (its bytes, as they are in the file)
// that is loaded at sectionAddr: function start fields are relative to the
// section (or to themselves), so the address is what makes them absolute.
func NewReader(data []byte, sectionAddr uint64) (*Reader, error) {
	s, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return ReaderFor(s, sectionAddr)
}

// ReaderFor makes a Reader for a section in memory, loaded at sectionAddr:
// decoded or built (its functions read as Decode reads them from its
// bytes, so the answers are those of NewReader on the encoded section).
// The Reader keeps s: s must not change afterwards. An error says the
// section's FRE data is malformed.
func ReaderFor(s *Section, sectionAddr uint64) (*Reader, error) {
	fdes, err := s.Functions()
	if err != nil {
		return nil, err
	}
	order := make([]int, len(fdes))
	starts := make([]uint64, len(fdes))
	for i := range fdes {
		order[i], starts[i] = i, s.FuncStart(i, sectionAddr)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(starts[a], starts[b]) })
	r := &Reader{
		sec: s, addr: sectionAddr, fdes: fdes,
		funcs: make([]readerFunc, len(order)),
	}
	size := 0
	for k, i := range order {
		f := &fdes[i]
		r.funcs[k] = readerFunc{start: starts[i], fde: int32(i), size: f.Size, fre: size, numFRE: uint32(len(f.FREs)),
			info: f.Info, info2: f.Info2, rep: f.RepSize, shape: freShape(f.FREs)}
		size += r.funcs[k].packedSize()
	}
	r.fres = make([]byte, 0, size)
	for k := range r.funcs {
		r.fres = r.funcs[k].pack(r.fres, fdes[r.funcs[k].fde].FREs)
	}
	r.makeBuckets()
	return r, nil
}

// widthCode returns log2 of the bytes (1, 2 or 4) that v needs, as
// unsigned or as signed.
func widthCode(v int64, signed bool) uint8 {
	switch {
	case signed && v >= -1<<7 && v < 1<<7, !signed && v < 1<<8:
		return 0
	case signed && v >= -1<<15 && v < 1<<15, !signed && v < 1<<16:
		return 1
	}
	return 2
}

// freShape returns the narrowest packing of es (readerFunc.shape).
func freShape(es []FRE) uint8 {
	var sc, wc, n uint8
	for _, e := range es {
		sc = max(sc, widthCode(int64(e.StartAddr), false))
		n = max(n, uint8(min(len(e.Words), MaxDataWords)))
		for _, w := range e.Words {
			wc = max(wc, widthCode(int64(w), true))
		}
	}
	return sc | wc<<2 | n<<4
}

// packedSize returns the bytes of f's packed FRE table.
func (f *readerFunc) packedSize() int {
	return int(f.numFRE) * (1<<(f.shape&3) + 2 + int(f.maxWords())<<(f.shape>>2&3))
}

// pack appends FREs es to b as f's packed FRE table (f.shape).
func (f *readerFunc) pack(b []byte, es []FRE) []byte {
	sc, wc, n := f.shape&3, f.shape>>2&3, f.maxWords()
	put := func(v uint32, code uint8) {
		switch code {
		case 0:
			b = append(b, byte(v))
		case 1:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		default:
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	for _, e := range es {
		put(e.StartAddr, sc)
	}
	for _, e := range es {
		// The count as it is (more than n: Lookup reads the FRE from
		// the section), the words as far as they fit.
		m := min(len(e.Words), MaxDataWords)
		b = append(b, e.Info, byte(min(len(e.Words), 255)))
		for k := range int(n) {
			var w int32
			if k < m {
				w = e.Words[k]
			}
			put(uint32(w), wc)
		}
	}
	return b
}

// makeBuckets fills the bucket table: the fewest buckets of a power of two
// bytes, at most len(funcs)/funcsPerBucket.
func (r *Reader) makeBuckets() {
	n := len(r.funcs)
	if n == 0 {
		return
	}
	r.base = r.funcs[0].start
	span := r.funcs[n-1].start - r.base
	limit := uint64(max(n/funcsPerBucket, 1))
	for r.shift < 63 && span>>r.shift >= limit {
		r.shift++
	}
	nb := int(span>>r.shift) + 1
	r.bucket = make([]uint32, nb+1)
	k := 0
	for b := range nb {
		for k < n && (r.funcs[k].start-r.base)>>r.shift < uint64(b) {
			k++
		}
		r.bucket[b] = uint32(k)
	}
	r.bucket[nb] = uint32(n)
}

// uintAt reads the little-endian unsigned value of 1 << code bytes at p.
func uintAt(p []byte, code uint32) uint32 {
	switch code {
	case 0:
		return uint32(p[0])
	case 1:
		return uint32(binary.LittleEndian.Uint16(p))
	}
	return binary.LittleEndian.Uint32(p)
}

// intAt reads the little-endian signed value of 1 << code bytes at p.
func intAt(p []byte, code uint32) int32 {
	switch code {
	case 0:
		return int32(int8(p[0]))
	case 1:
		return int32(int16(binary.LittleEndian.Uint16(p)))
	}
	return int32(binary.LittleEndian.Uint32(p))
}

// ReaderFromELF reads the SFrame section of an ELF file (ReadELFSection):
// at its address in a linked file; in a relocatable object with its
// relocations applied, every section at address 0, as objdump reads it.
func ReaderFromELF(f *elf.File) (*Reader, error) {
	sec, data, err := ReadELFSection(f)
	if err != nil {
		return nil, err
	}
	addr := sec.Addr
	if f.Type == elf.ET_REL {
		addr = 0
	}
	r, err := NewReader(data, addr)
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", sec.Name, err)
	}
	return r, nil
}

// Section returns the section read: NewReader's decoded, ReaderFor's as
// given (its functions are read with Section.FDE, or Func).
func (r *Reader) Section() *Section { return r.sec }

// NumFuncs returns the number of functions in the section.
func (r *Reader) NumFuncs() int { return len(r.funcs) }

// Func returns the i-th function in address order.
func (r *Reader) Func(i int) Func {
	k := int(r.funcs[i].fde)
	return Func{Start: r.funcs[i].start, FDE: &r.fdes[k], Index: k}
}

// Find returns the FDE (its index in the section) and the FRE (its index
// in the function) that cover pc. It reports false when no function covers
// pc, or when the function has no FRE for it (a PC before its first FRE).
// PCMASK functions (PLT stubs) match their FREs on the PC's offset modulo
// their repeat size, as the specification says; a repeat size of 0 matches
// nothing. Find allocates nothing.
func (r *Reader) Find(pc uint64) (fde, fre int, ok bool) {
	k, j, ok := r.find(pc)
	if !ok {
		return 0, 0, false
	}
	return int(r.funcs[k].fde), j, true
}

// find returns the function (its place in address order) and the FRE (its
// index in the function) that cover pc.
func (r *Reader) find(pc uint64) (k, j int, ok bool) {
	// The last function starting at or before pc: among the starts of
	// its bucket.
	if len(r.funcs) == 0 || pc < r.base {
		return 0, 0, false
	}
	b := min((pc-r.base)>>r.shift, uint64(len(r.bucket)-2))
	lo, hi := int(r.bucket[b]), int(r.bucket[b+1])
	k = lo + countAtOrBelow(r.funcs[lo:hi], pc) - 1
	if k < 0 {
		return 0, 0, false
	}
	f := &r.funcs[k]
	off := pc - f.start
	if off >= uint64(f.size) {
		return 0, 0, false
	}
	if (FDE{Info: f.info}).PCType() == PCMask {
		if f.rep == 0 {
			return 0, 0, false
		}
		off %= uint64(f.rep)
	}
	// The last FRE starting at or before off.
	sc := uint32(f.shape & 3)
	fres := r.fres[f.fre : f.fre+int(f.numFRE)<<sc]
	lo, hi = 0, int(f.numFRE)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint64(uintAt(fres[m<<sc:], sc)) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, 0, false
	}
	return k, lo - 1, true
}

// Lookup finds the function and FRE that cover pc (as Find) and says what
// the FRE means (Header.Frame). It reports false where Find does, and for
// an FRE whose data words do not fit its FDE type. Lookup allocates
// nothing.
func (r *Reader) Lookup(pc uint64) (Lookup, bool) {
	k, j, ok := r.find(pc)
	if !ok {
		return Lookup{}, false
	}
	f := &r.funcs[k]
	fde := FDE{Info: f.info, Info2: f.info2}
	wc := uint32(f.shape >> 2 & 3)
	rec := f.fre + int(f.numFRE)<<(f.shape&3) + j*int(2+f.maxWords()<<wc)
	p := r.fres[rec:]
	var words [MaxDataWords]int32
	e := FRE{Info: p[0]}
	if n := uint32(p[1]); n <= f.maxWords() {
		for i := range n {
			words[i] = intAt(p[2+i<<wc:], wc)
		}
		e.Words = words[:n]
	} else {
		e = r.fdes[f.fde].FREs[j]
	}
	fr, err := r.sec.Header.Frame(&fde, &e)
	if err != nil {
		return Lookup{}, false
	}
	return Lookup{Frame: fr, Func: int(f.fde), FRE: j, Start: f.start}, true
}

// countAtOrBelow returns how many of fs (in address order) start at or
// before pc.
func countAtOrBelow(fs []readerFunc, pc uint64) int {
	lo, hi := 0, len(fs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if fs[m].start <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Covering returns the function whose address range holds pc, whether or
// not it has an FRE for it: a stack walker asks it when Lookup finds
// nothing, to tell a signal trampoline kept without FREs (its FDE's signal
// bit set; lower keeps such functions, as gas does) from a PC that no
// function covers. Covering allocates nothing.
func (r *Reader) Covering(pc uint64) (Func, bool) {
	if len(r.funcs) == 0 || pc < r.base {
		return Func{}, false
	}
	b := min((pc-r.base)>>r.shift, uint64(len(r.bucket)-2))
	lo, hi := int(r.bucket[b]), int(r.bucket[b+1])
	k := lo + countAtOrBelow(r.funcs[lo:hi], pc) - 1
	if k < 0 || pc-r.funcs[k].start >= uint64(r.funcs[k].size) {
		return Func{}, false
	}
	return r.Func(k), true
}
