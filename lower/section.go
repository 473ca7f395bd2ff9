package lower

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// Reloc is one relocation of the .sframe section of a relocatable object:
// the PC-relative 64-bit reference from an FDE's start field to its
// function, against the section symbol of the function's section.
type Reloc struct {
	Offset  uint64 // r_offset: 28 + 16*i for FDE i
	Type    uint32 // R_X86_64_PC64, R_AARCH64_PREL64 or R_390_PC64
	Section int    // ELF section index whose section symbol is referenced
	Addend  int64  // the function's offset in that section
}

// Result is the SFrame section for a whole CFI section.
type Result struct {
	// Section has the header gas writes (version 3, FDE_FUNC_START_PCREL)
	// and one FDE per kept function, in CFI order. FREOffset holds the
	// insertion order as Encode's ordering key. For relocatable objects
	// StartOffset is 0 (Relocs fill it at link time); for linked files
	// call Place once the section address is known.
	Section *emit.Section
	// Skipped lists, in CFI order, the functions gas would warn about: left
	// out, or (Emitted) kept with no FREs.
	Skipped []Skip
	// Relocs has, for relocatable objects, one relocation per FDE.
	Relocs []Reloc
	// Starts is, per FDE of Section, the function's start: the absolute
	// address in a linked file, the offset in its section in an object.
	Starts []uint64
	// Sources is, per FDE of Section, the CFI FDE it was made from (nil
	// for PLT FDEs); nil after LowerScan.
	Sources []*cfi.FDE
	// FDEsRead is the number of CFI FDEs read, lowered or not: those of
	// the Frames given to Lower or LowerFile, or that LowerScan read.
	FDEsRead int

	// Shared counts the functions whose FRE data repeats an earlier
	// function's and points at it (Options.ShareFREs).
	Shared int
	// Merged counts the functions written as part of the FDE of the
	// function before them (Options.MergeFDEs).
	Merged int

	copied int             // functions whose FREs were copied from an earlier one's
	fast   int             // functions translated on the fast path
	sharer *emit.FRESharer // with Options.ShareFREs (version 3): shares the parts as they join, made at the first join
	// shareRoom is, with Options.ShareFREs (version 3), the number of
	// functions the sharer is made for (0: none).
	shareRoom int
	runs      *sortedRuns // parts sorted by start, for EncodeThenPlace; nil without
}

// Lower translates every FDE of frames, in section order, as GNU as
// --gsframe does for the functions of one assembly file (with
// opt.GasCompat, bug for bug; otherwise where gas's translation means what
// the CFI means). It fails only when the target is unusable; functions
// that cannot be represented are listed in Result.Skipped.
//
// For a relocatable object (t.Relocatable) the result is what gas writes:
// FDE start fields 0 with one relocation each, and on s390x the section
// padded to a multiple of 8 bytes. In a linked file, the correct mode
// leaves out FDEs of size 0: they describe no address, and ld's copy of
// one shares its start with the next function, which the Linux kernel
// refuses (the whole section).
func Lower(frames *cfi.Frames, t Target, opt Options) (*Result, error) {
	if frames == nil {
		return nil, fmt.Errorf("no CFI")
	}
	if frames.Relocatable != t.Relocatable {
		return nil, fmt.Errorf("CFI of a relocatable object is %v, target says %v", frames.Relocatable, t.Relocatable)
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	v2 := false
	switch opt.Version {
	case 0, emit.Version3:
	case emit.Version2:
		if err := checkV2(t, opt.V2Layout); err != nil {
			return nil, err
		}
		v2 = true
	default:
		return nil, fmt.Errorf("unsupported SFrame version %d", opt.Version)
	}
	// Room for the PLT FDEs LowerFile appends (ld makes at most two per
	// PLT section), so that they do not copy the whole list.
	n, packed := len(frames.FDEs)+8, packedEstimate(frames.FDEs)
	res := newResult(t, opt, n, packed, false)
	if opt.Workers > 1 && len(frames.FDEs) >= opt.Workers {
		if !lowerParallel(res, t, chunks(frames, t, opt, min(opt.Workers*partsPerWorker, len(frames.FDEs))), opt.Workers, opt.Hold) {
			// Some function failed: lowering again in one piece gives
			// the error as the serial path words it.
			res = newResult(t, opt, n, packed, false)
			if err := lowerRange(res, frames, frames.FDEs, t, opt); err != nil {
				return nil, err
			}
		}
	} else if err := lowerRange(res, frames, frames.FDEs, t, opt); err != nil {
		return nil, err
	}
	if v2 {
		if err := toVersion2(res, t, opt.V2Layout); err != nil {
			return nil, err
		}
	}
	if err := res.share(opt); err != nil {
		return nil, err
	}
	padObject(res, t)
	res.FDEsRead = len(frames.FDEs)
	return res, nil
}

// share shares the result's repeated FRE data with opt.ShareFREs: what
// its sharer has not shared yet (the functions of a result not
// joined in parts), or the whole section.
func (r *Result) share(opt Options) error {
	if !opt.ShareFREs {
		return nil
	}
	var n int
	var err error
	if r.sharer != nil {
		n, err = r.sharer.Share(r.Section)
	} else {
		n, err = r.Section.ShareFREs()
	}
	if err != nil {
		return fmt.Errorf("sharing FRE data: %w", err)
	}
	r.Shared += n
	return nil
}

// padObject pads the section of an s390x object as gas does: s390 gas
// rounds section sizes up to 8 (md_section_align).
func padObject(res *Result, t Target) {
	if t.Relocatable && t.Arch == S390X {
		if n := encodedSize(res.Section) % 8; n != 0 {
			res.Section.Trailer = make([]byte, 8-n)
		}
	}
}

// packedEstimate is a little more than the packed FRE data of fdes
// usually takes (on x86_64 shared libraries: the attribute records plus
// 1.05 to 1.17 bytes per byte of CFI instructions), so that the packed
// section is allocated once instead of growing by copies (31 MB of
// garbage for 6 MB of data on libLLVM.so). Only a guess: FREData grows
// past it when needed.
func packedEstimate(fdes []*cfi.FDE) int {
	return packedSize(fdes) + 1024 // and the PLT FDEs
}

// packedSize is the part of packedEstimate that is the functions' own.
func packedSize(fdes []*cfi.FDE) int {
	n := 0
	for _, f := range fdes {
		n += emit.FDEAttrSize + len(f.Instructions) + len(f.Instructions)/4
	}
	return n
}

// encodedSize is the size Encode will give sec, without its Trailer.
func encodedSize(sec *emit.Section) int {
	size, err := sec.Size()
	if err != nil {
		return 0 // Encode says why
	}
	return size - len(sec.Trailer)
}

// Place sets the start fields of a linked file's section at sectionAddr
// and sorts the FDE index by start address, as ld does (stable; FRE data
// stays in insertion order), setting FDE_SORTED. Starts and Sources follow
// the new order.
func (r *Result) Place(sectionAddr uint64) {
	sec := r.Section
	if perm := r.placeOrder(sectionAddr, nil); perm != nil {
		r.permute(perm)
	}
	for i := range sec.NumFDEs() {
		sec.SetFuncStart(i, r.Starts[i], sectionAddr)
	}
	sec.Header.Flags |= emit.FlagFDESorted
}

// EncodeThenPlace encodes the section as Place(sectionAddr) followed by
// Section.EncodeParts would, but without reordering r: the FDE index is
// written in start order from where the FDEs are (an emit.Placement). It
// returns the bytes, and place, which leaves r as Place does (what the
// bytes hold): the index, Starts and Sources put in the order the index
// was written (not sorted a second time) and the start fields set. A
// caller that does not read r in memory afterwards need not call place,
// and saves the reordering; place must be called before r is used
// otherwise, and at most once. A version 2 section (a placement writes a
// version 3 index) is placed, then encoded.
func (r *Result) EncodeThenPlace(sectionAddr uint64) (parts [][]byte, place func(), err error) {
	parts, order, err := r.encodePlaced(sectionAddr)
	if err != nil {
		return nil, nil, err
	}
	return parts, func() {
		sec := r.Section
		if order != nil { // nil: in start order already, or placed (version 2)
			r.gather(order)
		}
		for i := range sec.NumFDEs() {
			sec.SetFuncStart(i, r.Starts[i], sectionAddr)
		}
		sec.Header.Flags |= emit.FlagFDESorted
	}, nil
}

// gather puts the section's index entries, Starts and Sources in
// order (position j gets what was at order[j]) into new lists: sequential
// writes, where permute follows cycles in place (on libLLVM.so's 160,806
// functions 1.2-2.0 ms, permute 8-56 ms in the same runs), for the price of
// a copy of the index and Starts.
func (r *Result) gather(order []int) {
	sec := r.Section
	index := make([]emit.IndexEntry, len(order))
	starts := make([]uint64, len(order))
	for j, i := range order {
		index[j], starts[j] = sec.Index[i], r.Starts[i]
	}
	sec.Index, r.Starts = index, starts
	if len(r.Sources) == len(order) {
		sources := make([]*cfi.FDE, len(order))
		for j, i := range order {
			sources[j] = r.Sources[i]
		}
		r.Sources = sources
	}
}

// encodePlaced is EncodeThenPlace's encoding, also returning the order the index was
// written in (emit.Placement.Order: nil for the FDEs' own order, or for a
// version 2 section, which it places).
func (r *Result) encodePlaced(sectionAddr uint64) ([][]byte, []int, error) {
	sec := r.Section
	if sec.Header.Version != emit.Version3 {
		// A placement writes a version 3 index.
		r.Place(sectionAddr)
		parts, err := sec.EncodeParts(nil)
		return parts, nil, err
	}
	// One list holds the header and index (head, its first bytes) and
	// the order (its last n words), and the sort works in both: memory
	// touched once, 24 bytes a function where three lists took 40 (the
	// index is written over the sort's two halves, from the order in the
	// last n words, past the index's end).
	n := len(r.Starts)
	headWords := (sec.FREDataOffset() + intBytes - 1) / intBytes
	// The runs, once: the index is written over them.
	runs := r.runs
	r.runs = nil
	var mem []int
	if runs != nil && len(runs.mem) >= headWords+n {
		mem = runs.mem // touched by the workers already
	} else {
		mem = make([]int, headWords+n)
	}
	head := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(mem))), intBytes*headWords)[:0]
	if runs != nil {
		// The parts sorted while lowering, merged; should that not be
		// the order (see sortedRuns), or the encoding fail, the sort
		// below (and any error of the encoding again).
		if order := runs.order(r.Starts, mem); order != nil {
			if parts, err := sec.EncodeParts(&emit.Placement{Order: order, Starts: r.Starts, Addr: sectionAddr, Head: head}); err == nil {
				return parts, order, nil
			}
		}
	}
	order := r.placeOrder(sectionAddr, mem)
	parts, err := sec.EncodeParts(&emit.Placement{Order: order, Starts: r.Starts, Addr: sectionAddr, Head: head})
	return parts, order, err
}

// intBytes is the size of an int (the words of the memory EncodeThenPlace
// shares between the header and index and the sort): 8 on 64-bit systems.
const intBytes = bits.UintSize / 8

// placeOrder returns the order of the FDEs sorted by start as ld sorts
// them, or nil when they are in that order already. ld compares starts as
// signed section-relative offsets; ties keep the index order (the sort is
// stable). The sort works in mem when it holds 2n words at least (the
// order is then its last n; the rest is left as the sort left it), else in
// memory of its own.
func (r *Result) placeOrder(sectionAddr uint64, mem []int) []int {
	n := len(r.Starts)
	// Order-preserving unsigned keys of the signed offsets.
	key := func(i int) uint64 { return (r.Starts[i] - sectionAddr) ^ 1<<63 }
	sorted := true
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for i := range n {
		k := key(i)
		if k < hi {
			sorted = false // below an earlier key
		}
		lo, hi = min(lo, k), max(hi, k)
	}
	if sorted {
		return nil
	}
	ibits := bits.Len(uint(n))
	kbits := bits.Len64(hi - lo)
	if ibits+kbits > bits.UintSize-1 || n < radixMin {
		return r.placeOrderCompare(sectionAddr, mem)
	}
	// Radix sort, least significant digit first, of key<<ibits | index
	// on the key bits: stable, so equal keys keep the index order. The
	// values are ints (not negative: they take fewer bits than one) so
	// that the sorted ones become the permutation in place: the last pass
	// keeps only the index. The values start in the list where an odd
	// number of passes leaves them at mem's end.
	const digit = 11
	if len(mem) < 2*n {
		mem = make([]int, 2*n)
	}
	vals, tmp := mem[:n], mem[len(mem)-n:]
	passes := (kbits + digit - 1) / digit
	if passes%2 == 0 {
		vals, tmp = tmp, vals
	}
	for i := range n {
		vals[i] = int((key(i)-lo)<<ibits) | i
	}
	if passes == 0 {
		for j, v := range vals {
			vals[j] = v & (1<<ibits - 1)
		}
	}
	for pass := range passes {
		shift := ibits + pass*digit
		keep := -1 // all of a value but in the last pass
		if pass == passes-1 {
			keep = 1<<ibits - 1
		}
		var count [1<<digit + 1]int
		for _, v := range vals {
			count[v>>shift&(1<<digit-1)+1]++
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for _, v := range vals {
			d := v >> shift & (1<<digit - 1)
			tmp[count[d]] = v & keep
			count[d]++
		}
		vals, tmp = tmp, vals
	}
	return vals
}

// radixMin is the number of FDEs from which placeOrder sorts by radix:
// each pass clears and sums a count of 2049 words, which costs more than
// comparing the starts of a small library's functions (400 libraries of
// fewer than 100 functions: 8M instructions of 146M, by callgrind).
const radixMin = 256

// placeOrderCompare is placeOrder by comparisons, for fewer FDEs than
// radixMin or offsets spread over more bits than the radix sort's keys
// hold.
func (r *Result) placeOrderCompare(sectionAddr uint64, mem []int) []int {
	type key struct {
		rel int64
		i   int
	}
	keys := make([]key, len(r.Starts))
	for i, start := range r.Starts {
		keys[i] = key{int64(start - sectionAddr), i}
	}
	// The index makes keys distinct: the unstable sort gives the stable
	// order.
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.rel, b.rel); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	var perm []int
	if len(mem) >= 2*len(keys) {
		perm = mem[len(mem)-len(keys):]
	} else {
		perm = make([]int, len(keys))
	}
	for j, k := range keys {
		perm[j] = k.i
	}
	return perm
}

// permute reorders the FDEs (the section's index entries),
// Starts and Sources in place so that position i holds what was at
// perm[i]: a big section is not copied. Sources are left alone when they
// do not match the FDEs one to one (dropped by a caller done with them).
func (r *Result) permute(perm []int) {
	done := make([]bool, len(perm))
	permuteList(r.Section.Index, perm, done)
	permuteList(r.Starts, perm, done)
	if len(r.Sources) == len(perm) {
		permuteList(r.Sources, perm, done)
	}
}

// permuteList reorders list in place so that position i holds what was at
// perm[i], following each cycle of perm once (done, as long as perm,
// marks the positions set).
func permuteList[T any](list []T, perm []int, done []bool) {
	clear(done)
	for i := range perm {
		if done[i] || perm[i] == i {
			continue
		}
		v := list[i]
		for j := i; ; {
			done[j] = true
			k := perm[j]
			if k == i {
				list[j] = v
				break
			}
			list[j] = list[k]
			j = k
		}
	}
}
