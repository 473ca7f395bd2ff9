package emit

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// AppendPacked checks f as Encode would, appends its attribute record and
// FREs, encoded in the byte order of the section's ABI, to s.Packed, and
// its index entry to s.Index (FREOffset: the record's offset). f.FREs may
// be reused once it returns. s must be packed already or empty, in
// version 3.
func (s *Section) AppendPacked(f FDE) error {
	w, err := s.BeginPacked(f)
	if err != nil {
		return err
	}
	for j := range f.FREs {
		e := &f.FREs[j]
		if err := w.Add(e.StartAddr, e.Info, e.Words); err != nil {
			w.Abort()
			return err
		}
	}
	return w.End()
}

// PackedFDE appends one function to a packed section FRE by FRE: made by
// Section.BeginPacked, given each FRE with Add, finished by End (or taken
// back by Abort). For a caller that has the FREs in another form than
// []FRE: the checks and bytes are AppendPacked's.
type PackedFDE struct {
	s     *Section
	start int64  // the FDE's StartOffset
	size  uint32 // its Size
	off   int    // where the attribute record starts in s.Packed
	n     int    // FREs so far
	ft    FREType
	big   bool // the ABI's byte order is big-endian
}

// maxFRESize is the most bytes one FRE takes.
const maxFRESize = 4 + 1 + 4*MaxDataWords

// maxDefaultFRESize is the most bytes an FRE of a MinWriter takes: a
// 4-byte start, the info byte and three 4-byte words (a default FDE's).
const maxDefaultFRESize = 4 + 1 + 4*3

// BeginPacked starts appending f (its FREs are not looked at) to the
// packed section s: it appends f's attribute record to s.Packed. s must
// be packed already or empty, in version 3; nothing else may be appended
// to s until End or Abort.
func (s *Section) BeginPacked(f FDE) (PackedFDE, error) {
	if s.Packed == nil {
		if len(s.FDEs) > 0 {
			return PackedFDE{}, fmt.Errorf("pack: section has %d unpacked FDEs", len(s.FDEs))
		}
		s.Packed = []byte{}
	}
	if s.Header.Version != Version3 {
		return PackedFDE{}, fmt.Errorf("pack: version %d (only 3)", s.Header.Version)
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return PackedFDE{}, fmt.Errorf("pack: unknown ABI %d", uint8(s.Header.ABI))
	}
	big := order == binary.BigEndian
	if len(f.FREs) > MaxFREsPerFDE {
		return PackedFDE{}, fmt.Errorf("pack: FDE %d: %d FREs (at most %d)", len(s.Index), len(f.FREs), MaxFREsPerFDE)
	}
	ft := f.FREType()
	if ft.AddrSize() == 0 {
		return PackedFDE{}, fmt.Errorf("pack: FDE %d: invalid FRE type %d", len(s.Index), uint8(ft))
	}
	w := PackedFDE{s: s, start: f.StartOffset, size: f.Size, off: len(s.Packed), ft: ft, big: big}
	s.Packed = append(s.Packed, 0, 0, f.Info, f.Info2, f.RepSize)
	return w, nil
}

// Add checks and appends one FRE: its start address, info byte and data
// words (as many, of the size, as the info byte says).
func (w *PackedFDE) Add(start uint32, info uint8, words []int32) error {
	ws := DataWordSize(info >> 5 & 3)
	if w.n == MaxFREsPerFDE || uint64(start) >= w.ft.Limit() || start > w.size || ws.Bytes() == 0 ||
		int(info>>1&0xf) != len(words) || len(words) > MaxDataWords || !wordsFit(words, ws) {
		return w.addError(start, info, words)
	}
	w.put(start, info, ws, words)
	return nil
}

// MinWriter appends one function to a packed section FRE by FRE, each
// given by its values and written in the smallest data-word size that
// holds each of its words as a signed number: begun by Begin, given each
// FRE by Add, ended by End. Until End nothing of the section changes: a
// writer dropped leaves it as it was. For a caller that has the values
// of the FREs rather than their encoding (lower's fast path); the bytes
// are AppendPacked's.
type MinWriter struct {
	s     *Section
	b     []byte // s.Packed, then the function's record so far, to b[p]; at its capacity
	p     int
	off   int // where the record starts
	size  uint32
	info  uint8  // the FDE's Info
	start int64  // its StartOffset
	limit uint64 // of start addresses
	as    int    // bytes of a start address
	big   bool   // the ABI's byte order is big-endian
	n     int    // FREs so far
	err   error  // the first FRE refused
	// AddSmall's FREs start below smallEnd: 0 but in a little-endian
	// ABI, with start addresses of one or two bytes (up to the size), no
	// FRE refused. What follows the start address is multiplied by
	// startMul (1<<8 or 1<<16) to move it past it.
	smallEnd   uint32
	startMul   uint64
	smallFixed int // bytes of start address and info
}

// Begin starts appending f (its FREs are not looked at) to the packed
// section s, which must be packed already or empty, in version 3.
func (w *MinWriter) Begin(s *Section, f FDE) error {
	if s.Packed == nil || s.Header.Version != Version3 {
		// BeginPacked makes s packed or says why it cannot be.
		pw, err := s.BeginPacked(FDE{Info: f.Info})
		if err != nil {
			return err
		}
		pw.Abort()
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return fmt.Errorf("pack: unknown ABI %d", uint8(s.Header.ABI))
	}
	big := order == binary.BigEndian
	ft := f.FREType()
	if ft.Limit() == 0 {
		return fmt.Errorf("pack: FDE %d: invalid FRE type %d", len(s.Index), uint8(ft))
	}
	b := s.Packed
	off := len(b)
	if need := FDEAttrSize + 8*maxDefaultFRESize; cap(b)-off < need {
		b = slices.Grow(b, need)
	}
	b = b[:cap(b)]
	b[off+2], b[off+3], b[off+4] = f.Info, f.Info2, f.RepSize
	// Field by field: a composite literal would write the whole struct.
	w.s, w.b, w.p, w.off = s, b, off+FDEAttrSize, off
	w.size, w.info, w.start = f.Size, f.Info, f.StartOffset
	w.limit, w.as, w.big, w.n, w.err = ft.Limit(), ft.AddrSize(), big, 0, nil
	w.smallEnd = 0
	if !big && w.as <= 2 {
		w.smallEnd, w.startMul, w.smallFixed = uint32(min(uint64(f.Size), w.limit-1))+1, 1<<(8*w.as), w.as+1
	}
	return nil
}

// AddSmall is Add for the usual FRE of a little-endian ABI with start
// addresses of one or two bytes, its info byte given (FREInfo(baseSP, n,
// DataWord1B, mangledRA)): one or two data words that each fit a signed
// byte (w1 is checked but not written when n is 1). It reports false,
// having done nothing, for any other FRE, or when the record needs room:
// the caller then calls Add. It is small enough to be inlined, where Add
// is not: it writes the FRE in one 8-byte store (the bytes past its end
// are written over by the next one or left past the record), and does
// not count against MaxFREsPerFDE (End does: more fail it).
func (w *MinWriter) AddSmall(start uint32, info uint8, n int, w0, w1 int32) bool {
	b := w.b[w.p:]
	if start >= w.smallEnd || uint(n-1) > 1 || uint32((w0+128)|(w1+128)) > 255 || len(b) < 8 {
		return false
	}
	binary.LittleEndian.PutUint64(b, uint64(start)|(uint64(info)|uint64(uint8(w0))<<8|uint64(uint8(w1))<<16)*w.startMul)
	w.p += w.smallFixed + n
	w.n++
	return true
}

// Add appends an FRE: its start address, whether the CFA is SP-based and
// RA mangled (its info byte's bits), and its n data words, of w0, w1, w2
// (1 <= n <= 3: CFA first, then as the ABI lays them out). An FRE that
// Encode would refuse makes End fail.
func (w *MinWriter) Add(start uint32, baseSP, mangledRA bool, n int, w0, w1, w2 int32) {
	if w.err != nil {
		return
	}
	if uint64(start) >= w.limit || start > w.size || uint(n-1) > 2 || w.n == MaxFREsPerFDE {
		w.err = w.addError(start, baseSP, mangledRA, n, [3]int32{w0, w1, w2})
		w.smallEnd = 0
		return
	}
	if n < 3 {
		w2 = 0
		if n < 2 {
			w1 = 0
		}
	}
	// v fits k signed bits when v^(v>>31), its magnitude less one if
	// negative, is below 1<<(k-1).
	m := uint32(w0^w0>>31) | uint32(w1^w1>>31) | uint32(w2^w2>>31)
	ws, wb := DataWord1B, 1
	switch {
	case m >= 1<<15:
		ws, wb = DataWord4B, 4
	case m >= 1<<7:
		ws, wb = DataWord2B, 2
	}
	// The FRE is written whole (start, info, three words of its size)
	// into room for the largest, then the slice ends after what it
	// takes: no loop over its words.
	// w.b is not stored again but when it grows (the store of a slice
	// has the garbage collector's write barrier).
	p := w.p
	if len(w.b)-p < maxDefaultFRESize {
		w.b = slices.Grow(w.b[:p], maxDefaultFRESize)
		w.b = w.b[:cap(w.b)]
	}
	q := w.b[p : p+maxDefaultFRESize]
	as := w.as
	switch {
	case as == 1:
		q[0] = uint8(start)
	case w.big && as == 2:
		binary.BigEndian.PutUint16(q, uint16(start))
	case as == 2:
		binary.LittleEndian.PutUint16(q, uint16(start))
	case w.big:
		binary.BigEndian.PutUint32(q, start)
	default:
		binary.LittleEndian.PutUint32(q, start)
	}
	q[as] = FREInfo(baseSP, n, ws, mangledRA)
	q = q[as+1 : as+1+12]
	switch {
	case wb == 1:
		q[0], q[1], q[2] = uint8(w0), uint8(w1), uint8(w2)
	case wb == 2 && w.big:
		binary.BigEndian.PutUint16(q, uint16(w0))
		binary.BigEndian.PutUint16(q[2:], uint16(w1))
		binary.BigEndian.PutUint16(q[4:], uint16(w2))
	case wb == 2:
		binary.LittleEndian.PutUint16(q, uint16(w0))
		binary.LittleEndian.PutUint16(q[2:], uint16(w1))
		binary.LittleEndian.PutUint16(q[4:], uint16(w2))
	case w.big:
		binary.BigEndian.PutUint32(q, uint32(w0))
		binary.BigEndian.PutUint32(q[4:], uint32(w1))
		binary.BigEndian.PutUint32(q[8:], uint32(w2))
	default:
		binary.LittleEndian.PutUint32(q, uint32(w0))
		binary.LittleEndian.PutUint32(q[4:], uint32(w1))
		binary.LittleEndian.PutUint32(q[8:], uint32(w2))
	}
	w.p = p + as + 1 + n*wb
	w.n++
}

// Len returns the number of FREs added so far.
func (w *MinWriter) Len() int { return w.n }

// End appends the function to the section: its record and FREs to
// s.Packed, its index entry to s.Index (FREOffset: the record's offset).
// It fails, the section unchanged, when Add refused an FRE.
func (w *MinWriter) End() error {
	s := w.s
	if w.err != nil {
		return w.err
	}
	if w.n > MaxFREsPerFDE { // AddSmall does not count
		return fmt.Errorf("pack: FDE %d: more than %d FREs", len(s.Index), MaxFREsPerFDE)
	}
	if uint64(w.p) > math.MaxUint32 {
		return fmt.Errorf("pack: FRE data past 4 GiB at FDE %d", len(s.Index))
	}
	if w.big {
		binary.BigEndian.PutUint16(w.b[w.off:], uint16(w.n))
	} else {
		binary.LittleEndian.PutUint16(w.b[w.off:], uint16(w.n))
	}
	s.Packed = w.b[:w.p]
	s.PackedFREs += w.n
	s.Index = append(s.Index, IndexEntry{StartOffset: w.start, Size: w.size, FREOffset: uint32(w.off)})
	return nil
}

// addError is the error of Add for FRE w.n, which it refuses: checkFRE's.
func (w *MinWriter) addError(start uint32, baseSP, mangledRA bool, n int, words [3]int32) error {
	var err error
	if n < 1 || n > 3 {
		err = fmt.Errorf("FRE %d has %d data words (1 to 3)", w.n, n)
	} else {
		fre := FRE{StartAddr: start, Info: FREInfo(baseSP, n, DataWord4B, mangledRA), Words: slices.Clone(words[:n])}
		if _, err = checkFRE(FDE{Info: w.info}.FREType(), w.size, w.n, &fre); err == nil {
			err = fmt.Errorf("more than %d FREs", MaxFREsPerFDE)
		}
	}
	return fmt.Errorf("pack: FDE %d: %w", len(w.s.Index), err)
}

// addError is the error of Add for an FRE it refuses: checkFRE's.
func (w *PackedFDE) addError(start uint32, info uint8, words []int32) error {
	e := FRE{StartAddr: start, Info: info, Words: slices.Clone(words)}
	_, err := checkFRE(w.ft, w.size, w.n, &e)
	if err == nil {
		err = fmt.Errorf("more than %d FREs", MaxFREsPerFDE)
	}
	return fmt.Errorf("pack: FDE %d: %w", len(w.s.Index), err)
}

// put appends a checked FRE.
func (w *PackedFDE) put(start uint32, info uint8, ws DataWordSize, words []int32) {
	b := w.s.Packed
	if cap(b)-len(b) < maxFRESize {
		b = slices.Grow(b, maxFRESize)
	}
	p := len(b)
	b = b[:p+maxFRESize]
	switch w.ft {
	case FREAddr1:
		b[p] = uint8(start)
		p++
	case FREAddr2:
		w.put16(b[p:], uint16(start))
		p += 2
	default:
		w.put32(b[p:], start)
		p += 4
	}
	b[p] = info
	p++
	switch ws {
	case DataWord1B:
		for _, v := range words {
			b[p] = uint8(v)
			p++
		}
	case DataWord2B:
		for _, v := range words {
			w.put16(b[p:], uint16(v))
			p += 2
		}
	default:
		for _, v := range words {
			w.put32(b[p:], uint32(v))
			p += 4
		}
	}
	w.s.Packed = b[:p]
	w.n++
}

// wordsFit reports whether every word fits size s.
func wordsFit(words []int32, s DataWordSize) bool {
	for _, v := range words {
		if !wordFits(v, s) {
			return false
		}
	}
	return true
}

func (w *PackedFDE) put16(b []byte, v uint16) {
	if w.big {
		binary.BigEndian.PutUint16(b, v)
	} else {
		binary.LittleEndian.PutUint16(b, v)
	}
}

func (w *PackedFDE) put32(b []byte, v uint32) {
	if w.big {
		binary.BigEndian.PutUint32(b, v)
	} else {
		binary.LittleEndian.PutUint32(b, v)
	}
}

// Len returns the number of FREs added so far.
func (w *PackedFDE) Len() int { return w.n }

// End writes the function's FRE count into its attribute record and
// appends its index entry to s.Index (FREOffset: the record's offset).
func (w *PackedFDE) End() error {
	s := w.s
	if uint64(len(s.Packed)) > math.MaxUint32 {
		w.Abort()
		return fmt.Errorf("pack: FRE data past 4 GiB at FDE %d", len(s.Index))
	}
	w.put16(s.Packed[w.off:], uint16(w.n))
	s.PackedFREs += w.n
	s.Index = append(s.Index, IndexEntry{StartOffset: w.start, Size: w.size, FREOffset: uint32(w.off)})
	return nil
}

// Abort takes the function back: s.Packed ends where it did before
// BeginPacked.
func (w *PackedFDE) Abort() {
	w.s.Packed = w.s.Packed[:w.off]
}

// AppendPackedCopy appends to the packed section s a function of the given
// size whose SFrame FDE is that of FDE i: a copy of its attribute record
// and FREs, placed after the records so far (so that the FRE data stays in
// index order, as GNU ld writes it), with start offset 0 (for the caller
// to set). The FREs must fit the new size: the last one may not start past
// it. For a function that lowers to the same FREs as an earlier one (most
// often, from the same CFI instructions).
func (s *Section) AppendPackedCopy(i int, size uint32) error {
	f, err := s.PackedFunc(i)
	if err != nil {
		return err
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return fmt.Errorf("pack: unknown ABI %d", uint8(s.Header.ABI))
	}
	start := int(f.FREOffset)
	n, nFREs, last, err := packedRecord(s.Packed, start, order, f.FREType())
	if err != nil {
		return fmt.Errorf("pack: FDE %d: %w", i, err)
	}
	if nFREs > 0 && last > size {
		return fmt.Errorf("pack: FDE %d: its last FRE starts at %#x, past the size %#x", i, last, size)
	}
	off := len(s.Packed)
	if uint64(off)+uint64(n) > math.MaxUint32 {
		return fmt.Errorf("pack: FRE data past 4 GiB at FDE %d", len(s.Index))
	}
	s.Packed = append(s.Packed, s.Packed[start:start+n]...)
	s.PackedFREs += nFREs
	s.Index = append(s.Index, IndexEntry{Size: size, FREOffset: uint32(off)})
	return nil
}

// PackedFunc returns function i of the packed section s as an FDE without
// its FREs: its index entry's fields and its attribute record's Info,
// Info2 and RepSize.
func (s *Section) PackedFunc(i int) (FDE, error) {
	if s.Packed == nil || i < 0 || i >= len(s.Index) {
		return FDE{}, fmt.Errorf("pack: no packed FDE %d (%d FDEs)", i, len(s.Index))
	}
	e := s.Index[i]
	if uint64(e.FREOffset)+FDEAttrSize > uint64(len(s.Packed)) {
		return FDE{}, fmt.Errorf("pack: FDE %d: FRE offset %#x past the packed FRE data (%#x bytes)", i, e.FREOffset, len(s.Packed))
	}
	r := s.Packed[e.FREOffset:]
	return FDE{StartOffset: e.StartOffset, Size: e.Size, Info: r[2], Info2: r[3], RepSize: r[4], FREOffset: e.FREOffset}, nil
}

// packedRecord walks the attribute record at b[start:] and its FREs of type
// ft: its length in bytes, its number of FREs and the start of the last.
func packedRecord(b []byte, start int, order binary.ByteOrder, ft FREType) (n, nFREs int, last uint32, err error) {
	as := ft.AddrSize()
	if as == 0 || start < 0 || start > len(b)-FDEAttrSize {
		return 0, 0, 0, fmt.Errorf("no attribute record at %#x", start)
	}
	nFREs = int(order.Uint16(b[start:]))
	p := start + FDEAttrSize
	for j := 0; j < nFREs; j++ {
		if p > len(b)-as-1 {
			return 0, 0, 0, fmt.Errorf("FRE %d runs past the packed data", j)
		}
		switch as {
		case 1:
			last = uint32(b[p])
		case 2:
			last = uint32(order.Uint16(b[p:]))
		default:
			last = order.Uint32(b[p:])
		}
		e := FRE{Info: b[p+as]}
		p += as + 1 + e.DataWordCount()*e.DataWordSize().Bytes()
	}
	if p > len(b) {
		return 0, 0, 0, fmt.Errorf("FREs run past the packed data")
	}
	return p - start, nFREs, last, nil
}
