package emit

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"
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
	// followed by searchWindow entries of ^0, sizes and blks the rest of
	// what a lookup reads of each; fdeOf[k] is the index in the section of
	// function k, nil when that is k (a sorted index). A search starts in
	// the bucket tables: groups[b>>gshift] + bucket[b] is how many
	// functions start below base+b<<shift, so the function of a PC is
	// among the few of its bucket (two small tables read, then one or two
	// cache lines of starts, instead of a binary search's dozen dependent
	// cache misses). A bucket's count is a byte over its group's first,
	// in groups of 1<<gshift buckets (the most, up to maxGroupShift, whose
	// counts all fit a byte): tables small enough to stay in the cache
	// while the entries and blocks that lookups read pass through it.
	starts []uint64
	sizes  []uint32 // the functions' sizes
	// blks say where each function's FRE is: its block's offset in
	// blocks << 1, or, for a function of one FRE at its start (inlineFRE
	// set), that FRE's index in frames << 1.
	blks   []uint32
	fdeOf  []int32
	base   uint64
	shift  uint
	gshift uint
	bucket []uint8
	groups []uint32
	// ents are what a search reads of function k, when every function
	// ends within 4 GiB of base (else nil, and the search reads starts,
	// sizes and blks), followed by searchWindow entries of ^0: its
	// start's offset from base in the bits from eshift up (as few as the
	// last end needs), its size in the bits from pbits up (zmask of them;
	// a size of zmask or more reads as zmask, and the search reads sizes),
	// its blks in the pmask bits below. Comparing an entry with
	// off<<eshift|low compares the start with base+off, and the entry
	// found gives the size and the block without another read: a lookup
	// reads the bucket, one or two lines of entries and the block.
	// dmax: no function ends past base+dmax.
	ents              []uint64
	eshift, pbits     uint
	low, zmask, pmask uint64
	dmax              uint64
	// blocks holds each distinct block of FREs once (functions sharing
	// one in the section share it here), in the layout of packBlock: an
	// 8-byte head, the FREs' starts, then the index in frames of each
	// FRE's meaning, packed as narrow as they fit. A lookup reads one or
	// two cache lines of it.
	blocks []byte
	// frames are the distinct meanings of the section's FREs
	// (Header.Frame's), worked out when the Reader is made; frames[0]
	// stands for an FRE that has none (data words that do not fit its
	// FDE type): Lookup reports false. A section has few distinct ones
	// (785 in libLLVM.so's 1.3 million FREs), so the table stays in
	// the cache.
	frames []Frame
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
	// searchWindow+1 of them, also past the last.
	blockPad = 4 * (searchWindow + 1)
)

// Flags of what record says of an FRE; with its three offsets (the
// CFA's, the RA's and the FP's), the key of its Frame in Reader.frames.
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
	// recSignal: Frame.Signal (the FDE's signal bit).
	recSignal = 1 << 6
)

// searchWindow is how many starts a search reads at once: the functions
// of a bucket, the FREs of a block (after the first), when there are fewer, are searched in
// log2(searchWindow) steps without a branch on the data (conditional
// moves); more, in a loop. A bucket of up to countWindow functions is
// searched by comparing its countWindow entries at once (independent
// reads and compares, summed, no step waiting for the one before): on
// libLLVM.so, 87% of the PCs of its functions are in such a bucket.
const (
	searchWindow = 16
	countWindow  = 8
)

// The bucket table of n functions has at most n*maxBucketsPerFunc
// buckets (each a power of two bytes of addresses), and is made finer,
// from n/4, while more than 1/crowdedShare of the functions share a
// bucket with searchWindow or more others. On libLLVM.so's section
// (160,806 functions) that is 183,938 buckets, where 1.7% of the
// functions are in buckets of more than 16: 184 KB of bytes and 46 KB of
// groups (16 buckets a group, maxGroupShift), where a count of 4 bytes a
// bucket took 736 KB, and a lookup a tenth more time out of the cache
// (docs/performance.md).
const (
	maxBucketsPerFunc = 2
	crowdedShare      = 64
	maxGroupShift     = 4
)

// maxBlocks is the most bytes Reader.blocks may take: offsets into it are
// 31 bits, shifted by one in Reader.blks (and a slice's length an int).
const maxBlocks = min(1<<31-1, math.MaxInt)

// inlineFRE marks a function whose one FRE starts at its first address
// (and whose PC type is PCInc): its Reader.blks is the index of the FRE's
// frame shifted by one, with this bit set, so that a lookup reads no
// block (on libLLVM.so, 31% of the functions).
const inlineFRE = 1

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
	r := &Reader{sec: s, addr: sectionAddr, fdes: fdes, starts: make([]uint64, n, n+searchWindow), sizes: make([]uint32, n), blks: make([]uint32, n)}
	sorted := true
	for i := range fdes {
		r.starts[i], r.sizes[i] = s.FuncStart(i, sectionAddr), fdes[i].Size
		sorted = sorted && (i == 0 || r.starts[i-1] <= r.starts[i])
	}
	if !sorted {
		order := make([]int32, n)
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(r.starts[a], r.starts[b]) })
		starts, sizes := make([]uint64, n, n+searchWindow), make([]uint32, n)
		for k, i := range order {
			starts[k], sizes[k] = r.starts[i], r.sizes[i]
		}
		r.starts, r.sizes, r.fdeOf = starts, sizes, order
	}
	for range searchWindow {
		r.starts = append(r.starts, ^uint64(0))
	}
	if err := r.packBlocks(limit); err != nil {
		return nil, err
	}
	r.makeBuckets()
	r.makeEntries()
	return r, nil
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
func (r *Reader) NumFuncs() int { return len(r.sizes) }

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
	k, j, _, _, ok := r.find(pc)
	if !ok {
		return 0, 0, false
	}
	return r.fdeIndex(k), j, true
}

// The searches below read the Reader's tables through unsafe.Pointer,
// without bounds checks, at places the tables hold by construction: a
// bucket below len(bucket)-1, searchWindow entries from one at or below
// the number of functions (ents' padding), a block's head, starts and frame indexes
// (Reader.blocks' padding: every read is 4 bytes, up to searchWindow
// starts). They compare without branches on the data: atOrBelow is 1 or 0
// by arithmetic, so that no mispredicted branch ends the overlap of one
// lookup's cache misses with the next one's.

// atOrBelow returns 1 if a <= b, else 0.
func atOrBelow(a, b uint64) uint {
	_, borrow := bits.Sub64(b, a, 0)
	return uint(borrow ^ 1)
}

// above returns 1 if a > b, else 0.
func above(a, b uint64) uint {
	_, borrow := bits.Sub64(b, a, 0)
	return uint(borrow)
}

// at returns the i-th uint64 from p.
func at(p unsafe.Pointer, i uint) uint64 { return *(*uint64)(unsafe.Add(p, i*8)) }

// le32 reads the 4 little-endian bytes at p.
func le32(p unsafe.Pointer) uint32 { return binary.LittleEndian.Uint32((*[4]byte)(p)[:]) }

// function returns the function (its place in address order) whose
// address range holds pc, pc's offset in it and the offset of its FRE
// block in Reader.blocks.
func (r *Reader) function(pc uint64) (k int, off, blk uint32, ok bool) {
	if r.ents == nil {
		return r.functionWide(pc)
	}
	// The last function starting at or before pc: among the entries of
	// its bucket, or the one before them. The entries after the bucket's
	// start above pc (or are the padding, ^0).
	d := pc - r.base
	if pc < r.base || d >= r.dmax {
		return 0, 0, 0, false
	}
	lo, hi := r.bucketRange(d)
	key := d<<(r.eshift&63) | r.low
	e := unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.ents)), lo*8)
	var c uint // how many of ents[lo:] start at or before pc
	if hi-lo <= countWindow {
		c = countWindow - ((above(at(e, 0), key) + above(at(e, 1), key)) + (above(at(e, 2), key) + above(at(e, 3), key)) +
			(above(at(e, 4), key) + above(at(e, 5), key)) + (above(at(e, 6), key) + above(at(e, 7), key)))
	} else if hi-lo < searchWindow {
		c = atOrBelow(at(e, 7), key) << 3
		c += atOrBelow(at(e, c+3), key) << 2
		c += atOrBelow(at(e, c+1), key) << 1
		c += atOrBelow(at(e, c), key)
	} else {
		c = countAtOrBelow(r.ents[lo:hi], key)
	}
	if lo+c == 0 {
		return 0, 0, 0, false
	}
	k = int(lo + c - 1)
	ent := r.ents[k]
	o := d - ent>>(r.eshift&63)
	size := ent >> (r.pbits & 63) & r.zmask
	if size == r.zmask {
		size = uint64(r.sizes[k])
	}
	if o >= size {
		return 0, 0, 0, false
	}
	return k, uint32(o), uint32(ent & r.pmask), true
}

// bucketRange returns the functions of the bucket of the address base+d
// (of the last bucket past it): those from lo up to hi start in it.
func (r *Reader) bucketRange(d uint64) (lo, hi uint) {
	bp := unsafe.Pointer(unsafe.SliceData(r.bucket))
	gp := unsafe.Pointer(unsafe.SliceData(r.groups))
	b := uintptr(min(d>>(r.shift&63), uint64(len(r.bucket)-2)))
	g := r.gshift & 63
	lo = uint(*(*uint32)(unsafe.Add(gp, b>>g*4))) + uint(*(*uint8)(unsafe.Add(bp, b)))
	hi = uint(*(*uint32)(unsafe.Add(gp, (b+1)>>g*4))) + uint(*(*uint8)(unsafe.Add(bp, b+1)))
	return lo, hi
}

// functionWide is function for a Reader without ents.
func (r *Reader) functionWide(pc uint64) (k int, off, blk uint32, ok bool) {
	if len(r.sizes) == 0 || pc < r.base {
		return 0, 0, 0, false
	}
	lo, hi := r.bucketRange(pc - r.base)
	k = int(lo+countAtOrBelow(r.starts[lo:hi], pc)) - 1
	if k < 0 || pc-r.starts[k] >= uint64(r.sizes[k]) {
		return 0, 0, 0, false
	}
	return k, uint32(pc - r.starts[k]), r.blks[k], true
}

// countAtOrBelow returns how many of the sorted values s are at or before
// v, in a binary search without branches on the data.
func countAtOrBelow(s []uint64, v uint64) uint {
	c, n := uint(0), uint(len(s))
	for n > 0 {
		half := (n + 1) >> 1
		le := atOrBelow(s[c+half-1], v)
		c += half & -le
		n = half - 1 + (n-half-half+1)&-le
	}
	return c
}

// find returns the function (its place in address order) and the FRE (its
// index in the function) that cover pc, the index in Reader.frames of the
// FRE's meaning, and the function's start.
func (r *Reader) find(pc uint64) (k, j int, frame uint32, start uint64, ok bool) {
	k, off, b, ok := r.function(pc)
	if !ok {
		return 0, 0, 0, 0, false
	}
	start = pc - uint64(off)
	if b&inlineFRE != 0 {
		return k, 0, b >> 1, start, true
	}
	blk := unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.blocks)), b>>1)
	head := (*[blockHead]byte)(blk)
	if PCType(head[headInfo]>>4&1) == PCMask {
		if head[headRep] == 0 {
			return 0, 0, 0, 0, false
		}
		off %= uint32(head[headRep])
	}
	// The last FRE starting at or before off: c of them start there.
	n := uint(le32(blk))
	sc, ic := uint(head[headShape]&3), uint(head[headShape]>>2&3)
	mask := uint32(1)<<(8<<sc) - 1 // 0xffffffff for sc 2: the shift makes 0
	starts := unsafe.Add(blk, blockHead)
	o := uint64(off)
	var c uint
	if n <= searchWindow {
		// Starts past the n-th read as 0xffffffff, above any offset
		// (below a function's size, itself a uint32). The first, then
		// the next searchWindow in log2(searchWindow) steps. The FRE
		// found is one whose start was compared (FREs out of order, which
		// no lookup is defined for, give one that starts at or before
		// off, as the loop's search does).
		st := func(i uint) uint64 {
			return uint64(le32(unsafe.Add(starts, i<<sc))&mask | uint32(int32(n-1-i)>>31))
		}
		c = atOrBelow(st(8), o) << 3
		c += atOrBelow(st(c+4), o) << 2
		c += atOrBelow(st(c+2), o) << 1
		c += atOrBelow(st(c+1), o)
		c += atOrBelow(st(0), o) | min(c, 1)
	} else {
		for m := n; m > 0; {
			half := (m + 1) >> 1
			le := atOrBelow(uint64(le32(unsafe.Add(starts, (c+half-1)<<sc))&mask), o)
			c += half & -le
			m = half - 1 + (m-half-half+1)&-le
		}
	}
	if c == 0 {
		return 0, 0, 0, 0, false
	}
	frame = le32(unsafe.Add(starts, n<<sc+(c-1)<<ic)) & (uint32(1)<<(8<<ic) - 1)
	return k, int(c - 1), frame, start, true
}

// Lookup finds the function and FRE that cover pc (as Find) and says what
// the FRE means (Header.Frame). It reports false where Find does, and for
// an FRE whose data words do not fit its FDE type. Lookup allocates
// nothing.
func (r *Reader) Lookup(pc uint64) (l Lookup, ok bool) {
	k, j, i, start, ok := r.find(pc)
	if !ok || i == 0 {
		return l, false
	}
	l.Frame, l.Func, l.FRE, l.Start = r.frames[i], r.fdeIndex(k), j, start
	return l, true
}

// Covering returns the function whose address range holds pc, whether or
// not it has an FRE for it: a stack walker asks it when Lookup finds
// nothing, to tell a signal trampoline kept without FREs (its FDE's signal
// bit set; lower keeps such functions, as gas does) from a PC that no
// function covers. Covering allocates nothing.
func (r *Reader) Covering(pc uint64) (Func, bool) {
	k, _, _, ok := r.function(pc)
	if !ok {
		return Func{}, false
	}
	return r.Func(k), true
}
