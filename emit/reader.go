package emit

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math"
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
	// starts are the functions' start addresses in address order,
	// followed by searchWindow entries of ^0, and funcs the rest of what
	// a lookup reads of each; fdeOf[k] is the index in the section of
	// function k, nil when that is k (a sorted index). A search starts in
	// bucket: bucket[b] is how many functions start below base+b<<shift,
	// so the function of a PC is among the few of its bucket (one table
	// read, then one or two cache lines of starts, instead of a binary
	// search's dozen dependent cache misses).
	starts []uint64
	funcs  []readerFunc
	fdeOf  []int32
	base   uint64
	shift  uint
	bucket []uint32
	// blocks holds each distinct block of FREs once (functions sharing
	// one in the section share it here), in the layout of packBlock: an
	// 8-byte head, the FREs' starts, then one record per FRE with the
	// FRE's meaning already worked out (the CFA's base register, the RA
	// and FP rules, their offsets: rec*), packed as narrow as they fit.
	// A lookup reads one or two cache lines of it.
	blocks []byte
	// cfaReg is the CFA's base register of a default FRE: the frame
	// pointer (record flag recSP clear) or the stack pointer (set).
	cfaReg [2]uint32
}

// readerFunc is what a lookup reads of one function besides its start.
type readerFunc struct {
	size uint32 // the function's size
	blk  uint32 // offset of its FRE block in Reader.blocks
}

// The head of a block in Reader.blocks: the FRE count (4 bytes), the
// shape (log2 of the start size in bits 0-1, log2 of the offset size in
// bits 2-3), the FDE's info byte and its repeat size, one byte unused.
const (
	blockHead = 8
	headShape = 4
	headInfo  = 5
	headRep   = 6
	// blockPad is the zero bytes after the last block: every start and
	// offset is read as 4 bytes (then masked or sign-extended to its
	// size), also the last one, and a search of a block's starts reads
	// searchWindow of them, also past the last.
	blockPad = 4 * searchWindow
)

// Flags of a record in Reader.blocks (its first byte); its three offsets
// follow (the CFA's, the RA's and the FP's, each 1, 2 or 4 bytes).
const (
	recSP        = 1 << 0 // the CFA is based on the stack pointer, else the frame pointer
	recRA        = 1 << 1 // the RA is saved at CFA+offset, else it is unchanged (LocSame)
	recFP        = 1 << 2 // the FP likewise
	recMangled   = 1 << 3 // Frame.RAMangled
	recOutermost = 1 << 4 // Frame.Outermost: no data words
	// recSlow: the record says nothing; Lookup evaluates the FRE with
	// Header.Frame (flex FDEs, version 2 s390x rules naming a register,
	// data words that do not fit the FDE type).
	recSlow = 1 << 5
)

// searchWindow is how many starts a search reads at once: the functions
// of a bucket, the FREs of a block, when there are fewer, are searched in
// log2(searchWindow) steps without a branch on the data (conditional
// moves); more, in a loop.
const searchWindow = 16

// The bucket table has at most len(funcs)*maxBucketsPerFunc buckets (each
// a power of two bytes of addresses), and is made finer, from
// len(funcs)/4, while more than 1/crowdedShare of the functions share a
// bucket with searchWindow or more others. On libLLVM.so's section
// (160,806 functions) that is 183,938 buckets (718 KB), where 1.7% of the
// functions are in buckets of more than 16.
const (
	maxBucketsPerFunc = 2
	crowdedShare      = 64
)

// maxBlocks is the most bytes Reader.blocks may take: offsets into it are
// 32 bits (and a slice's length an int).
const maxBlocks = min(1<<32-1, math.MaxInt)

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
	return readerFor(s, sectionAddr, maxBlocks)
}

// readerFor is ReaderFor with the limit of Reader.blocks (a test makes it
// small).
func readerFor(s *Section, sectionAddr uint64, limit int) (*Reader, error) {
	fdes, err := s.Functions()
	if err != nil {
		return nil, err
	}
	n := len(fdes)
	r := &Reader{sec: s, addr: sectionAddr, fdes: fdes, starts: make([]uint64, n, n+searchWindow), funcs: make([]readerFunc, n),
		cfaReg: [2]uint32{s.Header.ABI.FramePointer(), s.Header.ABI.StackPointer()}}
	sorted := true
	for i := range fdes {
		r.starts[i], r.funcs[i] = s.FuncStart(i, sectionAddr), readerFunc{size: fdes[i].Size}
		sorted = sorted && (i == 0 || r.starts[i-1] <= r.starts[i])
	}
	if !sorted {
		order := make([]int32, n)
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(r.starts[a], r.starts[b]) })
		starts, funcs := make([]uint64, n, n+searchWindow), make([]readerFunc, n)
		for k, i := range order {
			starts[k], funcs[k] = r.starts[i], r.funcs[i]
		}
		r.starts, r.funcs, r.fdeOf = starts, funcs, order
	}
	for range searchWindow {
		r.starts = append(r.starts, ^uint64(0))
	}
	if err := r.packBlocks(limit); err != nil {
		return nil, err
	}
	r.makeBuckets()
	return r, nil
}

// packBlocks fills Reader.blocks: one block for each distinct record of
// the section's FRE data (its offset there says which functions share
// it), in the order of the records.
func (r *Reader) packBlocks(limit int) error {
	n := len(r.funcs)
	if n == 0 {
		return nil
	}
	// Each function's record offset and place in address order, sorted by
	// offset: the functions of one record are adjacent.
	keys := make([]uint64, n)
	for k := range r.funcs {
		keys[k] = uint64(r.sec.Index[r.fdeIndex(k)].FREOffset)<<32 | uint64(k)
	}
	slices.Sort(keys)
	// The shape of each distinct block (in keys' order), then the blocks.
	shapes := make([]uint8, 0, n)
	size := 0
	for x, key := range keys {
		if x > 0 && key>>32 == keys[x-1]>>32 {
			continue
		}
		f := &r.fdes[r.fdeIndex(int(uint32(key)))]
		sc, wc := r.blockShape(f)
		shapes = append(shapes, sc|wc<<2)
		size += blockHead + len(f.FREs)*(1<<sc+1+3<<wc)
	}
	if size+blockPad > limit {
		return fmt.Errorf("%d bytes of FRE data, more than a Reader holds (%d)", size+blockPad, limit)
	}
	r.blocks = make([]byte, 0, size+blockPad)
	var blk uint32
	for x, key := range keys {
		k := int(uint32(key))
		if x == 0 || key>>32 != keys[x-1]>>32 {
			blk = uint32(len(r.blocks))
			r.blocks = r.packBlock(r.blocks, &r.fdes[r.fdeIndex(k)], shapes[0])
			shapes = shapes[1:]
		}
		r.funcs[k].blk = blk
	}
	r.blocks = append(r.blocks, make([]byte, blockPad)...)
	return nil
}

// fdeIndex returns the index in the section of funcs[k].
func (r *Reader) fdeIndex(k int) int {
	if r.fdeOf == nil {
		return k
	}
	return int(r.fdeOf[k])
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

// blockShape returns the narrowest packing of f's FREs: log2 of the bytes
// of their starts and of their records' offsets.
func (r *Reader) blockShape(f *FDE) (sc, wc uint8) {
	for j := range f.FREs {
		e := &f.FREs[j]
		_, cfa, ra, fp := r.record(f, e)
		sc = max(sc, widthCode(int64(e.StartAddr), false))
		wc = max(wc, widthCode(int64(cfa), true), widthCode(int64(ra), true), widthCode(int64(fp), true))
	}
	return sc, wc
}

// packBlock appends f's FREs to b as a block of Reader.blocks, packed as
// shape says (blockShape: the start size code, the offset size code << 2).
func (r *Reader) packBlock(b []byte, f *FDE, shape uint8) []byte {
	sc, wc := shape&3, shape>>2
	b = binary.LittleEndian.AppendUint32(b, uint32(len(f.FREs)))
	b = append(b, shape, f.Info, f.RepSize, 0)
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
	for _, e := range f.FREs {
		put(e.StartAddr, sc)
	}
	for j := range f.FREs {
		flags, cfa, ra, fp := r.record(f, &f.FREs[j])
		b = append(b, flags)
		put(uint32(cfa), wc)
		put(uint32(ra), wc)
		put(uint32(fp), wc)
	}
	return b
}

// record works out what FRE e of f means, for its record in a block: the
// flags and the CFA, RA and FP offsets (Header.Frame's reading of a
// default FDE, which lookup turns back into a Frame), or recSlow.
func (r *Reader) record(f *FDE, e *FRE) (flags uint8, cfa, ra, fp int32) {
	h := &r.sec.Header
	n := len(e.Words)
	if f.Type() != FDEDefault || e.DataWordCount() != n {
		return recSlow, 0, 0, 0
	}
	if n == 0 {
		return recOutermost, 0, 0, 0
	}
	w := e.Words
	if e.BaseRegSP() {
		flags |= recSP
	}
	if e.MangledRA() {
		flags |= recMangled
	}
	cfa = w[0]
	if h.ABI == ABIS390XBigEndian {
		cfa = S390XCFAOffsetDecode(w[0])
	}
	// A word saving RA or FP in a register (version 2, s390x, odd).
	regRule := func(v int32) bool { return h.Version == Version2 && h.ABI == ABIS390XBigEndian && v&1 != 0 }
	i := 1
	if h.CFAFixedRAOffset != 0 {
		flags, ra = flags|recRA, int32(h.CFAFixedRAOffset)
	} else if i < n {
		if w[i] != RAOffsetInvalid {
			if regRule(w[i]) {
				return recSlow, 0, 0, 0
			}
			flags, ra = flags|recRA, w[i]
		}
		i++
	}
	if h.CFAFixedFPOffset != 0 {
		flags, fp = flags|recFP, int32(h.CFAFixedFPOffset)
	} else if i < n {
		if regRule(w[i]) {
			return recSlow, 0, 0, 0
		}
		flags, fp = flags|recFP, w[i]
		i++
	}
	if i < n {
		return recSlow, 0, 0, 0
	}
	return flags, cfa, ra, fp
}

// makeBuckets fills the bucket table (maxBucketsPerFunc, crowdedShare).
func (r *Reader) makeBuckets() {
	n := len(r.funcs)
	if n == 0 {
		return
	}
	r.base = r.starts[0]
	span := r.starts[n-1] - r.base
	// The coarsest shift with at most n/4 buckets, then finer ones.
	for r.shift < 63 && span>>r.shift >= uint64(max(n/4, 1)) {
		r.shift++
	}
	for r.shift > 0 && span>>(r.shift-1) < uint64(n*maxBucketsPerFunc) && r.crowded(r.shift)*crowdedShare > n {
		r.shift--
	}
	nb := int(span>>r.shift) + 1
	r.bucket = make([]uint32, nb+1)
	k := 0
	for b := range nb {
		for k < n && (r.starts[k]-r.base)>>r.shift < uint64(b) {
			k++
		}
		r.bucket[b] = uint32(k)
	}
	r.bucket[nb] = uint32(n)
}

// crowded returns how many functions are in buckets of searchWindow or
// more functions with buckets of 1<<shift bytes.
func (r *Reader) crowded(shift uint) int {
	crowded, first := 0, 0
	for k := 1; k <= len(r.funcs); k++ {
		if k == len(r.funcs) || (r.starts[k]-r.base)>>shift != (r.starts[first]-r.base)>>shift {
			if k-first >= searchWindow {
				crowded += k - first
			}
			first = k
		}
	}
	return crowded
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
	k := r.fdeIndex(i)
	return Func{Start: r.starts[i], FDE: &r.fdes[k], Index: k}
}

// Find returns the FDE (its index in the section) and the FRE (its index
// in the function) that cover pc. It reports false when no function covers
// pc, or when the function has no FRE for it (a PC before its first FRE).
// PCMASK functions (PLT stubs) match their FREs on the PC's offset modulo
// their repeat size, as the specification says; a repeat size of 0 matches
// nothing. Find allocates nothing.
func (r *Reader) Find(pc uint64) (fde, fre int, ok bool) {
	k, j, _, ok := r.find(pc)
	if !ok {
		return 0, 0, false
	}
	return r.fdeIndex(k), j, true
}

// function returns the function (its place in address order) whose
// address range holds pc.
func (r *Reader) function(pc uint64) (int, bool) {
	// The last function starting at or before pc: among the starts of
	// its bucket, or the one before them. The starts after the bucket's
	// are above pc (or the padding, ^0).
	if len(r.funcs) == 0 || pc < r.base {
		return 0, false
	}
	b := min((pc-r.base)>>r.shift, uint64(len(r.bucket)-2))
	lo, hi := int(r.bucket[b]), int(r.bucket[b+1])
	c := 0 // how many of starts[lo:] are at or before pc
	if hi-lo < searchWindow {
		s := (*[searchWindow]uint64)(r.starts[lo : lo+searchWindow])
		if s[7] <= pc {
			c = 8
		}
		if s[c+3&15] <= pc {
			c += 4
		}
		if s[c+1&15] <= pc {
			c += 2
		}
		if s[c&15] <= pc {
			c++
		}
	} else {
		c = countAtOrBelow(r.starts[lo:hi], pc)
	}
	k := min(lo+c, len(r.funcs)) - 1
	if k < 0 || pc-r.starts[k] >= uint64(r.funcs[k].size) {
		return 0, false
	}
	return k, true
}

// countAtOrBelow returns how many of the sorted starts s are at or before
// pc, in a binary search without branches on the data.
func countAtOrBelow(s []uint64, pc uint64) int {
	c, n := 0, len(s)
	for n > 0 {
		half := (n + 1) >> 1
		if s[c+half-1] <= pc {
			c += half
			n -= half
		} else {
			n = half - 1
		}
	}
	return c
}

// find returns the function (its place in address order) and the FRE (its
// index in the function) that cover pc, and the offset of the FRE's record
// in Reader.blocks.
func (r *Reader) find(pc uint64) (k, j, rec int, ok bool) {
	k, ok = r.function(pc)
	if !ok {
		return 0, 0, 0, false
	}
	f := &r.funcs[k]
	off := uint32(pc - r.starts[k]) // below the function's size
	blk := r.blocks[f.blk:]
	if PCType(blk[headInfo]>>4&1) == PCMask {
		if blk[headRep] == 0 {
			return 0, 0, 0, false
		}
		off %= uint32(blk[headRep])
	}
	// The last FRE starting at or before off: c of them start there.
	n := int(binary.LittleEndian.Uint32(blk))
	shape := uint(blk[headShape])
	sc, wc := shape&3, shape>>2&3
	mask := uint32(1)<<(8<<sc) - 1 // 0xffffffff for sc 2: the shift makes 0
	starts := blk[blockHead:]
	c := 0
	if n < searchWindow {
		// Starts past the n-th read as 0xffffffff, above any offset.
		s := (*[4 * searchWindow]byte)(starts[:4*searchWindow])
		at := func(i int) uint32 {
			return binary.LittleEndian.Uint32(s[i<<sc:])&mask | uint32(int32(n-1-i)>>31)
		}
		if at(7) <= off {
			c = 8
		}
		if at(c+3) <= off {
			c += 4
		}
		if at(c+1) <= off {
			c += 2
		}
		if at(c) <= off {
			c++
		}
	} else {
		for m := n; m > 0; {
			half := (m + 1) >> 1
			if binary.LittleEndian.Uint32(starts[(c+half-1)<<sc:])&mask <= off {
				c += half
				m -= half
			} else {
				m = half - 1
			}
		}
	}
	if c == 0 {
		return 0, 0, 0, false
	}
	rec = int(f.blk) + blockHead + n<<sc + (c-1)*(1+3<<wc)
	return k, c - 1, rec, true
}

// Lookup finds the function and FRE that cover pc (as Find) and says what
// the FRE means (Header.Frame). It reports false where Find does, and for
// an FRE whose data words do not fit its FDE type. Lookup allocates
// nothing.
func (r *Reader) Lookup(pc uint64) (Lookup, bool) {
	k, j, rec, ok := r.find(pc)
	if !ok {
		return Lookup{}, false
	}
	f := &r.funcs[k]
	info := r.blocks[f.blk+headInfo]
	wc := uint(r.blocks[f.blk+headShape]) >> 2 & 3
	p := r.blocks[rec:]
	flags := p[0]
	l := Lookup{Func: r.fdeIndex(k), FRE: j, Start: r.starts[k]}
	switch {
	case flags&recSlow != 0:
		fde := &r.fdes[l.Func]
		fr, err := r.sec.Header.Frame(fde, &fde.FREs[j])
		if err != nil {
			return Lookup{}, false
		}
		l.Frame = fr
		return l, true
	case flags&recOutermost != 0:
		l.Outermost, l.Signal = true, info>>7 != 0
		return l, true
	}
	// Each offset read as 4 bytes, sign-extended from its size.
	sh := 32 - 8<<wc
	cfa := int32(binary.LittleEndian.Uint32(p[1:])<<sh) >> sh
	ra := int32(binary.LittleEndian.Uint32(p[1+1<<wc:])<<sh) >> sh
	fp := int32(binary.LittleEndian.Uint32(p[1+2<<wc:])<<sh) >> sh
	l.CFA = Loc{Kind: LocRule, RegBase: true, Reg: r.cfaReg[flags&recSP], Offset: int64(cfa)}
	l.RA = Loc{Kind: LocKind(flags >> 1 & 1), Offset: int64(ra), Deref: flags&recRA != 0}
	l.FP = Loc{Kind: LocKind(flags >> 2 & 1), Offset: int64(fp), Deref: flags&recFP != 0}
	l.RAMangled = flags&recMangled != 0
	l.Signal = info>>7 != 0
	return l, true
}

// Covering returns the function whose address range holds pc, whether or
// not it has an FRE for it: a stack walker asks it when Lookup finds
// nothing, to tell a signal trampoline kept without FREs (its FDE's signal
// bit set; lower keeps such functions, as gas does) from a PC that no
// function covers. Covering allocates nothing.
func (r *Reader) Covering(pc uint64) (Func, bool) {
	k, ok := r.function(pc)
	if !ok {
		return Func{}, false
	}
	return r.Func(k), true
}
