package emit

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// Decode reads an SFrame section of version 3 or 2, in the byte order its
// magic is stored in.
//
// Every count, offset and length is checked against data; allocations are
// bounded by the bytes present, never by a count alone. Errors are
// *FormatError values carrying the byte offset of the problem.
//
// The section is the one form of Section: the FDE index in Index, the FRE
// sub-section of a version 3 section in FREData as it is. A version 2
// section is read into the same form: each block of FREs, in the order of
// the sub-section, becomes a version 3 record (the FRE count, info and
// rep_size of its FDEs, Info2 0) followed by the same FREs, so that
// Encode writes it back as it was. The v2 padding bytes are not kept.
//
// Decode also requires the functions' FRE data to cover the FRE
// sub-section exactly: every byte belongs to a function, and two
// functions' data either do not overlap or start at the same offset (a
// block shared, as --share-fres writes it: the sharing FDEs have one FRE
// offset, and the header's FRE count counts them once per function). A
// version 2 FDE without FREs must point at the start of a block or at the
// end of the sub-section. Version 2 FDEs that share FREs but not their
// info or rep_size (a record holds both) get records of their own, each
// with a copy of the FREs, and a version 2 section whose FDEs share FREs
// gets SharedV2. It also requires FRE start addresses not past the
// function size, and only zero bytes after the FRE sub-section (s390x gas
// pads the section with them); those bytes go to Section.Trailer. So
// Encode reproduces any section Decode accepts byte for byte (a version 2
// section that shares some blocks of FREs must share all that repeat), as
// long as its header offsets have GNU's layout (fdeoff 0, FRE sub-section
// right after the FDE index).
func Decode(data []byte) (*Section, error) {
	d := decoder{data: data}
	return d.decode()
}

type decoder struct {
	sec   *Section
	data  []byte
	order binary.ByteOrder
	// words is a slab the FREs' data words are cut from.
	words []int32
	// freBudget is how many FREs the header's count still allows, and
	// freSlab as many FREs to cut the FDEs' FREs from; with reuse (Decode,
	// which only checks them) each function's FREs are decoded over the
	// last one's.
	freBudget uint64
	freSlab   []FRE
	reuse     bool
	// ents are the FDEs read (version 2: with the fields of their record).
	ents []entry
	// regions are the FRE sub-section ranges each FDE's data (attribute
	// record and FREs) takes, once per block shared.
	regions []region
	// blocks maps the FRE offset of each block read to the first FDE
	// that reads it and the largest start address of its FREs.
	blocks map[uint32]block
	shared bool // some FDEs share a block
}

// block is a function's FRE data, as decoded first.
type block struct {
	fde      int    // the first FDE whose data it is
	maxStart uint32 // the largest start address of its FREs
	n        int    // its number of FREs
}

// entry is an FDE as read: its index entry and its record's fields.
type entry struct {
	IndexEntry
	n             int // FREs
	info, repSize uint8
	end           uint32 // version 2: the end of its FREs in the sub-section
}

func (d *decoder) u16(off int) uint16 { return d.order.Uint16(d.data[off:]) }
func (d *decoder) u32(off int) uint32 { return d.order.Uint32(d.data[off:]) }

func (d *decoder) decode() (*Section, error) {
	data := d.data
	if len(data) < 4 {
		return nil, formatErr(0, "section too short for the preamble (%d bytes)", len(data))
	}
	switch {
	case binary.LittleEndian.Uint16(data) == Magic:
		d.order = binary.LittleEndian
	case binary.BigEndian.Uint16(data) == Magic:
		d.order = binary.BigEndian
	default:
		return nil, formatErr(0, "bad magic 0x%02x%02x", data[0], data[1])
	}
	var sec Section
	d.sec = &sec
	h := &sec.Header
	h.Version = data[2]
	h.Flags = Flags(data[3])
	if h.Version != Version2 && h.Version != Version3 {
		return nil, formatErr(2, "unsupported version %d", h.Version)
	}
	if len(data) < HeaderSize {
		return nil, formatErr(0, "section too short for the header (%d bytes)", len(data))
	}
	allFlags := FlagFDESorted | FlagFDEFuncStartPCRel
	if h.Version == Version2 {
		allFlags |= FlagFramePointer
	}
	if h.Flags&^allFlags != 0 {
		return nil, formatErr(3, "unknown flags %#x for version %d", uint8(h.Flags&^allFlags), h.Version)
	}
	h.ABI = ABI(data[4])
	if bo := h.ABI.ByteOrder(); bo == nil {
		return nil, formatErr(4, "unknown ABI %d", data[4])
	} else if bo != d.order {
		return nil, formatErr(0, "magic is %s but ABI %s is %s", orderName(d.order), h.ABI, orderName(bo))
	}
	h.CFAFixedFPOffset = int8(data[5])
	h.CFAFixedRAOffset = int8(data[6])
	auxLen := int(data[7])
	hdrEnd := HeaderSize + auxLen
	if hdrEnd > len(data) {
		return nil, formatErr(7, "auxiliary header (%d bytes) past end of section (%#x)", auxLen, len(data))
	}
	if auxLen > 0 {
		h.AuxHeader = append([]byte(nil), data[HeaderSize:hdrEnd]...)
	}
	numFDEs := uint64(d.u32(8))
	numFREs := d.u32(12)
	freLen := uint64(d.u32(16))
	fdeOff := uint64(d.u32(20))
	freOff := uint64(d.u32(24))
	rest := uint64(len(data) - hdrEnd)
	entSize := uint64(FDEIndexEntrySize)
	if h.Version == Version2 {
		entSize = FDEEntrySizeV2
	}
	if fdeOff > rest {
		return nil, formatErr(20, "FDE sub-section offset %#x past end (%#x)", fdeOff, rest)
	}
	if freOff > rest {
		return nil, formatErr(24, "FRE sub-section offset %#x past end (%#x)", freOff, rest)
	}
	if freLen > rest-freOff {
		return nil, formatErr(16, "FRE sub-section length %#x past end (%#x)", freLen, rest-freOff)
	}
	if fdeOff > freOff || numFDEs*entSize > freOff-fdeOff {
		return nil, formatErr(8, "%d FDEs (%#x bytes at %#x) overlap the FRE sub-section at %#x",
			numFDEs, numFDEs*entSize, fdeOff, freOff)
	}
	// Every FRE takes at least 2 bytes, so this bounds the FREs (and data
	// words) decoded: a block shared is decoded once. The header counts
	// the FREs of every function, a block shared once per function.
	d.freBudget = min(uint64(numFREs), freLen/2)
	d.reuse = true
	d.blocks = make(map[uint32]block)
	fdeStart := hdrEnd + int(fdeOff)
	freStart := hdrEnd + int(freOff)
	freEnd := freStart + int(freLen)

	d.ents = make([]entry, numFDEs)
	d.regions = make([]region, 0, numFDEs)
	var total uint64
	for i := range d.ents {
		off := fdeStart + i*int(entSize)
		var err error
		if h.Version == Version3 {
			err = d.fdeV3(&d.ents[i], i, off, freStart, freEnd)
		} else {
			err = d.fdeV2(&d.ents[i], i, off, freStart, freEnd)
		}
		if err != nil {
			return nil, err
		}
		total += uint64(d.ents[i].n)
	}
	if err := d.checkTiling(fdeStart, int(entSize), freStart, freEnd); err != nil {
		return nil, err
	}
	if total != uint64(numFREs) {
		return nil, formatErr(12, "header counts %d FREs, the FDEs have %d", numFREs, total)
	}
	sec.FRECount = int(total)
	sec.Index = make([]IndexEntry, numFDEs)
	for i := range d.ents {
		sec.Index[i] = d.ents[i].IndexEntry
	}
	if h.Version == Version3 {
		sec.FREData = append([]byte{}, data[freStart:freEnd]...)
	} else if err := d.recordsV2(fdeStart, int(entSize), freStart, freEnd); err != nil {
		return nil, err
	}
	if freEnd < len(data) {
		sec.Trailer = append([]byte(nil), data[freEnd:]...)
		for i, c := range sec.Trailer {
			if c != 0 {
				return nil, formatErr(freEnd+i, "non-zero byte %#02x after the FRE sub-section (only zero padding may follow it)", c)
			}
		}
	}
	return &sec, nil
}

// recordsV2 makes the FRE data of the version 2 section d.sec: each
// block of FREs, in the order of the sub-section, a version 3 record
// (an FDE without FREs, one of its own at its offset); the FRE offsets
// of the FDEs then point at their records.
func (d *decoder) recordsV2(fdeStart, entSize, freStart, freEnd int) error {
	ents := d.ents
	order := make([]int, len(ents))
	for i := range order {
		order[i] = i
	}
	// By offset; at one offset the FDEs without FREs first, then a
	// block (its FDEs sharing it in index order).
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(ents[a].FREOffset, ents[b].FREOffset), cmp.Compare(min(ents[a].n, 1), min(ents[b].n, 1)))
	})
	sec := d.sec
	out := make([]byte, 0, freEnd-freStart+FDEAttrSize*len(ents))
	pos := uint32(0) // where the records so far end, in the version 2 sub-section
	last := -1       // the FDE whose block was written last
	for _, i := range order {
		e := &ents[i]
		if e.n > 0 && last >= 0 && ents[last].FREOffset == e.FREOffset {
			sec.SharedV2 = true
			if g := &ents[last]; g.info == e.info && g.repSize == e.repSize {
				sec.Index[i].FREOffset = sec.Index[last].FREOffset
				continue
			}
			// The same FREs with another info or rep_size: a record of
			// its own, with a copy of them (SharedV2 writes them once).
			sec.Index[i].FREOffset = uint32(len(out))
			out = appendRecordV2(out, d.order, e, d.data[freStart+int(e.FREOffset):freStart+int(e.end)])
			continue
		}
		if e.FREOffset != pos {
			return formatErr(fdeStart+i*entSize, "FDE %d: FRE offset %#x is inside another FDE's FREs", i, e.FREOffset)
		}
		sec.Index[i].FREOffset = uint32(len(out))
		out = appendRecordV2(out, d.order, e, d.data[freStart+int(e.FREOffset):freStart+int(e.end)])
		if e.n > 0 {
			pos, last = e.end, i
		}
	}
	sec.FREData = out
	return nil
}

// appendRecordV2 appends to out the record of the version 2 FDE e, whose
// FREs are fres.
func appendRecordV2(out []byte, order binary.ByteOrder, e *entry, fres []byte) []byte {
	var attr [FDEAttrSize]byte
	order.PutUint16(attr[:], uint16(e.n))
	attr[2], attr[4] = e.info, e.repSize
	out = append(out, attr[:]...)
	if e.n > 0 {
		out = append(out, fres...)
	}
	return out
}

func orderName(bo binary.ByteOrder) string {
	if bo == binary.BigEndian {
		return "big-endian"
	}
	return "little-endian"
}

func (d *decoder) fdeV3(e *entry, i, off, freStart, freEnd int) error {
	e.StartOffset = int64(d.order.Uint64(d.data[off:]))
	e.Size = d.u32(off + 8)
	e.FREOffset = d.u32(off + 12)
	freLen := freEnd - freStart
	if uint64(e.FREOffset)+FDEAttrSize > uint64(freLen) {
		return formatErr(off, "FDE %d: FRE sub-section offset %#x past end (%#x)", i, e.FREOffset, freLen)
	}
	attr := freStart + int(e.FREOffset)
	e.n = int(d.u16(attr))
	e.info, e.repSize = d.data[attr+2], d.data[attr+4]
	f := FDE{Size: e.Size, Info: e.info, FREOffset: e.FREOffset}
	if b, ok := d.blocks[e.FREOffset]; ok {
		// The same attribute record, so the same FREs.
		return d.share(&f, i, b, attr+FDEAttrSize)
	}
	_, err := d.fres(&f, i, attr+2, attr, attr+FDEAttrSize, freEnd, e.n)
	return err
}

// share checks FDE i, whose FRE data (at p) is that of block b: b's FREs
// must start within its size.
func (d *decoder) share(f *FDE, i int, b block, p int) error {
	if b.maxStart > f.Size {
		return formatErr(p, "FDE %d: its FREs (those of FDE %d) start up to %#x, past the function size %#x", i, b.fde, b.maxStart, f.Size)
	}
	return nil
}

func (d *decoder) fdeV2(e *entry, i, off, freStart, freEnd int) error {
	e.StartOffset = int64(int32(d.u32(off)))
	e.Size = d.u32(off + 4)
	e.FREOffset = d.u32(off + 8)
	n := d.u32(off + 12)
	e.info, e.repSize = d.data[off+16], d.data[off+17]
	freLen := freEnd - freStart
	if uint64(e.FREOffset) > uint64(freLen) {
		return formatErr(off, "FDE %d: FRE sub-section offset %#x past end (%#x)", i, e.FREOffset, freLen)
	}
	if uint64(n) > uint64(freLen) {
		// Each FRE takes at least two bytes; this only keeps n in int range.
		return formatErr(off+12, "FDE %d: %d FREs cannot fit in the FRE sub-section (%#x bytes)", i, n, freLen)
	}
	e.n = int(n)
	f := FDE{Size: e.Size, Info: e.info, FREOffset: e.FREOffset}
	p := freStart + int(e.FREOffset)
	if b, ok := d.blocks[e.FREOffset]; ok && n > 0 {
		// Version 2 FDEs share FREs when they read as many of the same
		// type from the same offset.
		if g := &d.ents[b.fde]; b.n == e.n && (FDE{Info: g.info}).FREType() == f.FREType() {
			e.end = g.end
			return d.share(&f, i, b, p)
		}
	}
	end, err := d.fres(&f, i, off+16, p, p, freEnd, e.n)
	e.end = uint32(end - freStart)
	return err
}

// fres reads n FREs of FDE i starting at p and returns where they end;
// infoOff is where the FDE's info byte is (for the error offset),
// dataStart where its FRE data starts.
func (d *decoder) fres(f *FDE, i, infoOff, dataStart, p, end, n int) (int, error) {
	dataEnd, err := d.freList(f, i, infoOff, p, end, n)
	if err != nil {
		return 0, err
	}
	if dataEnd > dataStart {
		d.regions = append(d.regions, region{dataStart, dataEnd, i})
		b := block{fde: i, n: n}
		for j := range f.FREs {
			b.maxStart = max(b.maxStart, f.FREs[j].StartAddr)
		}
		d.blocks[f.FREOffset] = b
	}
	return dataEnd, nil
}

type region struct {
	start, end int // offsets in the section
	fde        int
}

// checkTiling requires the functions' FRE data to cover the FRE
// sub-section exactly, each byte belonging to one block (read by one
// function, as GNU writes it, or shared by several from its start: those
// are in regions once). libsframe reads a block shared as it reads any
// other, but for the byte order: on a host of the other byte order it
// converts the section in place, function by function, and would convert
// a shared block twice (it rejects such a section; verify says so).
func (d *decoder) checkTiling(fdeStart, entSize, freStart, freEnd int) error {
	slices.SortFunc(d.regions, func(a, b region) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.fde, b.fde))
	})
	at := freStart
	for k, r := range d.regions {
		if r.start < at && k > 0 {
			a := d.regions[k-1]
			return formatErr(fdeStart+r.fde*entSize, "FDE %d: FRE data at %#x overlaps FDE %d's (%#x-%#x)",
				r.fde, r.start-freStart, a.fde, a.start-freStart, a.end-freStart)
		}
		if r.start > at {
			return formatErr(at, "bytes %#x-%#x of the FRE sub-section belong to no FDE", at-freStart, r.start-freStart)
		}
		at = r.end
	}
	if at < freEnd {
		return formatErr(at, "bytes %#x-%#x of the FRE sub-section belong to no FDE", at-freStart, freEnd-freStart)
	}
	return nil
}

// freList reads the FREs and returns the offset just past them.
func (d *decoder) freList(f *FDE, i, infoOff, p, end, n int) (int, error) {
	ft := f.FREType()
	as := ft.AddrSize()
	if as == 0 {
		return 0, formatErr(infoOff, "FDE %d: invalid FRE type %d", i, uint8(ft))
	}
	if n == 0 {
		return p, nil
	}
	if n > (end-p)/(as+1) {
		return 0, formatErr(p, "FDE %d: %d FREs cannot fit in the %#x bytes left in the FRE sub-section", i, n, end-p)
	}
	if uint64(n) > d.freBudget {
		return 0, formatErr(p, "FDE %d: %d FREs exceed the header's FRE count", i, n)
	}
	d.freBudget -= uint64(n)
	if d.reuse {
		if cap(d.freSlab) < n {
			d.freSlab = make([]FRE, n)
		}
		f.FREs, d.words = d.freSlab[:n], d.words[:0]
	} else {
		f.FREs = d.freSlab[:n:n]
		d.freSlab = d.freSlab[n:]
	}
	for j := range f.FREs {
		e := &f.FREs[j]
		if end-p < as+1 {
			return 0, formatErr(p, "FDE %d: FRE %d past the end of the FRE sub-section at %#x", i, j, end)
		}
		switch ft {
		case FREAddr1:
			e.StartAddr = uint32(d.data[p])
		case FREAddr2:
			e.StartAddr = uint32(d.u16(p))
		default:
			e.StartAddr = d.u32(p)
		}
		if e.StartAddr > f.Size {
			// libsframe asserts this (objdump aborts).
			return 0, formatErr(p, "FDE %d: FRE %d: start address %#x past the function size %#x", i, j, e.StartAddr, f.Size)
		}
		p += as
		e.Info = d.data[p]
		size := e.DataWordSize()
		count := e.DataWordCount()
		if size.Bytes() == 0 {
			return 0, formatErr(p, "FDE %d: FRE %d: invalid data-word size code %d", i, j, uint8(size))
		}
		if count > MaxDataWords {
			return 0, formatErr(p, "FDE %d: FRE %d: %d data words (at most %d)", i, j, count, MaxDataWords)
		}
		p++
		if count*size.Bytes() > end-p {
			return 0, formatErr(p, "FDE %d: FRE %d: %d data words of %d bytes past the end of the FRE sub-section at %#x",
				i, j, count, size.Bytes(), end)
		}
		if count == 0 {
			e.Words = nil
			continue
		}
		e.Words = d.alloc(count, end-p)
		for k := range e.Words {
			switch size {
			case DataWord1B:
				e.Words[k] = int32(int8(d.data[p]))
			case DataWord2B:
				e.Words[k] = int32(int16(d.u16(p)))
			default:
				e.Words[k] = int32(d.u32(p))
			}
			p += size.Bytes()
		}
	}
	return p, nil
}

// alloc returns n words from the slab, refilling it with a chunk no bigger
// than the bytes left could need (each word takes at least one byte).
func (d *decoder) alloc(n, bytesLeft int) []int32 {
	if cap(d.words)-len(d.words) < n {
		c := min(max(bytesLeft, n), 4096)
		d.words = make([]int32, 0, c)
	}
	l := len(d.words)
	d.words = d.words[:l+n]
	return d.words[l : l+n : l+n]
}
