package emit

// Building a Reader from a section (readerFor): the search entries, the
// blocks of FREs with their Frame indices, the bucket table.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// narrowSpan bounds the offsets from base a Reader packs into ents: every
// function must end at or below base+narrowSpan, so that an offset takes
// at most 32 bits of an entry and its key (off<<eshift|low) stays below
// the padding (^0) for every off a search compares (below dmax).
const narrowSpan = 1<<32 - 1

// makeEntries fills ents when every function ends within narrowSpan of
// base.
func (r *Reader) makeEntries() {
	n := len(r.sizes)
	if n == 0 || r.starts[n-1]-r.base >= narrowSpan {
		return
	}
	var end uint64
	var place uint32
	for k, size := range r.sizes {
		end = max(end, r.starts[k]-r.base+uint64(size))
		place = max(place, r.blks[k])
	}
	if end > narrowSpan {
		return
	}
	sbits := uint(max(bits.Len64(end), 1)) // eshift below 64
	r.eshift, r.pbits = 64-sbits, uint(bits.Len32(place))
	r.dmax, r.low = 1<<sbits-1, 1<<r.eshift-1
	r.zmask, r.pmask = 1<<(r.eshift-r.pbits)-1, 1<<r.pbits-1
	ents := make([]uint64, n, n+searchWindow)
	for k, size := range r.sizes {
		ents[k] = (r.starts[k]-r.base)<<r.eshift | min(uint64(size), r.zmask)<<r.pbits | uint64(r.blks[k])
	}
	for range searchWindow {
		ents = append(ents, ^uint64(0))
	}
	r.ents = ents
}

// packBlocks fills Reader.blocks and Reader.frames: one block for each
// distinct record of the section's FRE data (its offset there says which
// functions share it), in the order of the records.
func (r *Reader) packBlocks(limit int) error {
	n := len(r.sizes)
	r.frames = []Frame{{}}
	if n == 0 {
		return nil
	}
	// Each function's record offset and place in address order, sorted by
	// offset: the functions of one record are adjacent.
	keys := make([]uint64, n)
	for k := range r.sizes {
		keys[k] = uint64(r.sec.Index[r.fdeIndex(k)].FREOffset)<<32 | uint64(k)
	}
	slices.Sort(keys)
	// The frame of each FRE of each distinct block (in keys' order), and
	// the shape of each block, then the blocks.
	total := 0
	for x, key := range keys {
		if x == 0 || key>>32 != keys[x-1]>>32 {
			total += len(r.fdes[r.fdeIndex(int(uint32(key)))].FREs)
		}
	}
	idx := make([]uint32, 0, total)
	shapes := make([]uint8, 0, n)
	size := 0
	fm := r.newFrameMap()
	for x, key := range keys {
		if x > 0 && key>>32 == keys[x-1]>>32 {
			continue
		}
		f := &r.fdes[r.fdeIndex(int(uint32(key)))]
		var sc, ic uint8
		for j := range f.FREs {
			i := fm.index(f, &f.FREs[j])
			idx = append(idx, i)
			sc = max(sc, widthCode(int64(f.FREs[j].StartAddr), false))
			ic = max(ic, widthCode(int64(i), false))
		}
		shapes = append(shapes, sc|ic<<2)
		size += blockHead + len(f.FREs)*(1<<sc+1<<ic)
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
			f := &r.fdes[r.fdeIndex(k)]
			r.blocks = packBlock(r.blocks, f, idx[:len(f.FREs)], shapes[0])
			idx, shapes = idx[len(f.FREs):], shapes[1:]
		}
		r.blks[k] = blk << 1
	}
	r.blocks = append(r.blocks, make([]byte, blockPad)...)
	for k, blk := range r.blks {
		if f := &r.fdes[r.fdeIndex(k)]; len(f.FREs) == 1 && f.FREs[0].StartAddr == 0 && f.PCType() == PCInc {
			r.blks[k] = r.frameOf(blk>>1)<<1 | inlineFRE
		}
	}
	return nil
}

// frameMap finds the index in Reader.frames of an FRE's Frame, adding it
// when it is new.
type frameMap struct {
	r *Reader
	// fast are the frames of default FREs by their record (flags and
	// three offsets), slow the others' by the Frame itself.
	fast map[[2]uint64]uint32
	slow map[Frame]uint32
}

func (r *Reader) newFrameMap() *frameMap {
	return &frameMap{r: r, fast: make(map[[2]uint64]uint32), slow: make(map[Frame]uint32)}
}

// index returns the index in Reader.frames of what FRE e of f means, 0
// where it means nothing (Header.Frame's error).
func (m *frameMap) index(f *FDE, e *FRE) uint32 {
	r := m.r
	flags, cfa, ra, fp := r.record(f, e)
	if flags&recSlow != 0 {
		fr, err := r.sec.Header.Frame(f, e)
		if err != nil {
			return 0
		}
		i, ok := m.slow[fr]
		if !ok {
			i = uint32(len(r.frames))
			r.frames = append(r.frames, fr)
			m.slow[fr] = i
		}
		return i
	}
	if f.Signal() {
		flags |= recSignal
	}
	key := [2]uint64{uint64(flags)<<32 | uint64(uint32(cfa)), uint64(uint32(ra))<<32 | uint64(uint32(fp))}
	if i, ok := m.fast[key]; ok {
		return i
	}
	fr := Frame{Outermost: flags&recOutermost != 0, Signal: flags&recSignal != 0}
	if !fr.Outermost {
		abi := r.sec.Header.ABI
		reg := abi.FramePointer()
		if flags&recSP != 0 {
			reg = abi.StackPointer()
		}
		fr.CFA = Loc{Kind: LocRule, RegBase: true, Reg: reg, Offset: int64(cfa)}
		if flags&recRA != 0 {
			fr.RA = Loc{Kind: LocRule, Offset: int64(ra), Deref: true}
		}
		if flags&recFP != 0 {
			fr.FP = Loc{Kind: LocRule, Offset: int64(fp), Deref: true}
		}
		fr.RAMangled = flags&recMangled != 0
	}
	i := uint32(len(r.frames))
	r.frames = append(r.frames, fr)
	m.fast[key] = i
	return i
}

// fdeIndex returns the index in the section of function k (in address
// order).
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

// packBlock appends f's FREs to b as a block of Reader.blocks: their
// starts, then idx (their frames' indexes), packed as shape says (the
// start size code, the index size code << 2: widthCode's).
func packBlock(b []byte, f *FDE, idx []uint32, shape uint8) []byte {
	sc, ic := shape&3, shape>>2
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
	for _, i := range idx {
		put(i, ic)
	}
	return b
}

// record works out what FRE e of f means, the key of its Frame: the flags
// and the CFA, RA and FP offsets (Header.Frame's reading of a default
// FDE), or recSlow (Header.Frame itself makes the Frame).
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
	n := len(r.sizes)
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
	counts := make([]uint32, nb+1) // how many functions start below each bucket
	k := 0
	for b := range nb {
		for k < n && (r.starts[k]-r.base)>>r.shift < uint64(b) {
			k++
		}
		counts[b] = uint32(k)
	}
	counts[nb] = uint32(n)
	r.gshift = groupShift(counts)
	r.bucket = make([]uint8, nb+1)
	r.groups = make([]uint32, nb>>r.gshift+1)
	for b, c := range counts {
		if b&(1<<r.gshift-1) == 0 {
			r.groups[b>>r.gshift] = c
		}
		r.bucket[b] = uint8(c - r.groups[b>>r.gshift])
	}
}

// groupShift returns the most, up to maxGroupShift, for which the counts
// of every group of 1<<shift buckets are within a byte of its first's
// (counts do not decrease: its last's is the most above). At 0, every
// count is its group's.
func groupShift(counts []uint32) uint {
	shift := uint(maxGroupShift)
	for g := 0; g < len(counts) && shift > 0; g += 1 << shift {
		for counts[min(g+1<<shift, len(counts))-1]-counts[g] > math.MaxUint8 {
			shift-- // g starts a group of the smaller size too; those before it fit
		}
	}
	return shift
}

// crowded returns how many functions are in buckets of searchWindow or
// more functions with buckets of 1<<shift bytes.
func (r *Reader) crowded(shift uint) int {
	crowded, first := 0, 0
	for k := 1; k <= len(r.sizes); k++ {
		if k == len(r.sizes) || (r.starts[k]-r.base)>>shift != (r.starts[first]-r.base)>>shift {
			if k-first >= searchWindow {
				crowded += k - first
			}
			first = k
		}
	}
	return crowded
}

// frameOf returns the index in Reader.frames of the first FRE's frame of
// the block at blk.
func (r *Reader) frameOf(blk uint32) uint32 {
	b := r.blocks[blk:]
	sc, ic := b[headShape]&3, b[headShape]>>2&3
	v := binary.LittleEndian.Uint32(b[blockHead+1<<sc:])
	return v & (uint32(1)<<(8<<ic) - 1)
}
