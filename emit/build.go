package emit

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// AppendFDE is the builder of a section: it checks f (the FRE count, each
// FRE's start address against the FRE type and the function size, its
// data-word count, size code and words), appends its attribute record and
// FREs, encoded in the byte order of the section's ABI, to s.FREData, and
// its index entry to s.Index (FREOffset: the record's offset; f.FREOffset
// is ignored). f.FREs may be reused once it returns.
func (s *Section) AppendFDE(f FDE) error {
	w, err := s.BeginFDE(f)
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

// FDEWriter appends one function to a section FRE by FRE: made by
// Section.BeginFDE, given each FRE with Add, finished by End (or taken
// back by Abort). For a caller that has the FREs in another form than
// []FRE: the checks and bytes are AppendFDE's.
type FDEWriter struct {
	s     *Section
	start int64  // the FDE's StartOffset
	size  uint32 // its Size
	off   int    // where the attribute record starts in s.FREData
	n     int    // FREs so far
	ft    FREType
	big   bool // the ABI's byte order is big-endian
}

// maxFRESize is the most bytes one FRE takes.
const maxFRESize = 4 + 1 + 4*MaxDataWords

// maxDefaultFRESize is the most bytes an FRE of a MinWriter takes: a
// 4-byte start, the info byte and three 4-byte words (a default FDE's).
const maxDefaultFRESize = 4 + 1 + 4*3

// BeginFDE starts appending f (its FREs are not looked at) to s: it
// appends f's attribute record to s.FREData. Nothing else may be appended
// to s until End or Abort.
func (s *Section) BeginFDE(f FDE) (FDEWriter, error) {
	if s.Header.Version != Version3 && s.Header.Version != Version2 {
		return FDEWriter{}, fmt.Errorf("append: unsupported version %d", s.Header.Version)
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return FDEWriter{}, fmt.Errorf("append: unknown ABI %d", uint8(s.Header.ABI))
	}
	big := order == binary.BigEndian
	if len(f.FREs) > MaxFREsPerFDE {
		return FDEWriter{}, fmt.Errorf("append: FDE %d: %d FREs (at most %d)", len(s.Index), len(f.FREs), MaxFREsPerFDE)
	}
	ft := f.FREType()
	if ft.AddrSize() == 0 {
		return FDEWriter{}, fmt.Errorf("append: FDE %d: invalid FRE type %d", len(s.Index), uint8(ft))
	}
	w := FDEWriter{s: s, start: f.StartOffset, size: f.Size, off: len(s.FREData), ft: ft, big: big}
	s.FREData = append(s.FREData, 0, 0, f.Info, f.Info2, f.RepSize)
	return w, nil
}

// Add checks and appends one FRE: its start address, info byte and data
// words (as many, of the size, as the info byte says).
func (w *FDEWriter) Add(start uint32, info uint8, words []int32) error {
	ws := DataWordSize(info >> 5 & 3)
	if w.n == MaxFREsPerFDE || uint64(start) >= w.ft.Limit() || start > w.size || ws.Bytes() == 0 ||
		int(info>>1&0xf) != len(words) || len(words) > MaxDataWords || !wordsFit(words, ws) {
		return w.addError(start, info, words)
	}
	w.put(start, info, ws, words)
	return nil
}

// MinWriter appends one function to a section FRE by FRE, each
// given by its values and written in the smallest data-word size that
// holds each of its words as a signed number: begun by Begin, given each
// FRE by Add, ended by End. Until End nothing of the section changes: a
// writer dropped leaves it as it was. For a caller that has the values
// of the FREs rather than their encoding (lower's fast path); the bytes
// are AppendFDE's.
type MinWriter struct {
	s     *Section
	b     []byte // s.FREData, then the function's record so far, to b[p]; at its capacity
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

// Begin starts appending f (its FREs are not looked at) to s.
func (w *MinWriter) Begin(s *Section, f *FDE) error {
	if s.Header.Version != Version3 && s.Header.Version != Version2 {
		return fmt.Errorf("append: unsupported version %d", s.Header.Version)
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return fmt.Errorf("append: unknown ABI %d", uint8(s.Header.ABI))
	}
	big := order == binary.BigEndian
	// f.FREType() would copy *f (a value method): the copy's wide loads
	// wait for the narrower stores that just made it (lower's fast path).
	ft := freTypeOf(f.Info)
	if ft.Limit() == 0 {
		return fmt.Errorf("append: FDE %d: invalid FRE type %d", len(s.Index), uint8(ft))
	}
	b := s.FREData
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

// AddSmall2 is AddSmall for an FRE whose words need two bytes: one or two
// data words that each fit a signed 16-bit number, one at least not a
// signed byte (AddSmall's), its info byte given with DataWord2B. It writes
// the FRE in one 8-byte store too (two bytes of start address, the info
// byte and two words take 7), and reports false, having done nothing, for
// any other FRE or when the record needs room.
func (w *MinWriter) AddSmall2(start uint32, info uint8, n int, w0, w1 int32) bool {
	b := w.b[w.p:]
	if start >= w.smallEnd || uint(n-1) > 1 || uint32((w0+1<<15)|(w1+1<<15)) > 1<<16-1 ||
		uint32((w0+128)|(w1+128)) <= 255 || len(b) < 8 {
		return false
	}
	binary.LittleEndian.PutUint64(b, uint64(start)|(uint64(info)|uint64(uint16(w0))<<8|uint64(uint16(w1))<<24)*w.startMul)
	w.p += w.smallFixed + 2*n
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
	ws := signedWordSize(uint32(w0^w0>>31) | uint32(w1^w1>>31) | uint32(w2^w2>>31))
	wb := ws.Bytes()
	// w.b is not stored again but when it grows (the store of a slice
	// has the garbage collector's write barrier).
	p := w.p
	if len(w.b)-p < maxFRESize {
		w.b = slices.Grow(w.b[:p], maxFRESize)
		w.b = w.b[:cap(w.b)]
	}
	words := [3]int32{w0, w1, w2}
	w.p = p + putFRE(w.b[p:p+maxFRESize], w.as, w.big, start, FREInfo(baseSP, n, ws, mangledRA), wb, words[:n])
	w.n++
}

// Len returns the number of FREs added so far.
func (w *MinWriter) Len() int { return w.n }

// End appends the function to the section: its record and FREs to
// s.FREData, its index entry to s.Index (FREOffset: the record's offset).
// It fails, the section unchanged, when Add refused an FRE.
func (w *MinWriter) End() error {
	s := w.s
	if w.err != nil {
		return w.err
	}
	if w.n > MaxFREsPerFDE { // AddSmall does not count
		return fmt.Errorf("append: FDE %d: more than %d FREs", len(s.Index), MaxFREsPerFDE)
	}
	if uint64(w.p) > math.MaxUint32 {
		return fmt.Errorf("append: FRE data past 4 GiB at FDE %d", len(s.Index))
	}
	if w.big {
		binary.BigEndian.PutUint16(w.b[w.off:], uint16(w.n))
	} else {
		binary.LittleEndian.PutUint16(w.b[w.off:], uint16(w.n))
	}
	s.FREData = w.b[:w.p]
	s.FRECount += w.n
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
	return fmt.Errorf("append: FDE %d: %w", len(w.s.Index), err)
}

// addError is the error of Add for an FRE it refuses: checkFRE's.
func (w *FDEWriter) addError(start uint32, info uint8, words []int32) error {
	e := FRE{StartAddr: start, Info: info, Words: slices.Clone(words)}
	_, err := checkFRE(w.ft, w.size, w.n, &e)
	if err == nil {
		err = fmt.Errorf("more than %d FREs", MaxFREsPerFDE)
	}
	return fmt.Errorf("append: FDE %d: %w", len(w.s.Index), err)
}

// put appends a checked FRE.
func (w *FDEWriter) put(start uint32, info uint8, ws DataWordSize, words []int32) {
	b := w.s.FREData
	if cap(b)-len(b) < maxFRESize {
		b = slices.Grow(b, maxFRESize)
	}
	p := len(b)
	b = b[:p+maxFRESize]
	p += putFRE(b[p:], w.ft.AddrSize(), w.big, start, info, ws.Bytes(), words)
	w.s.FREData = b[:p]
	w.n++
}

// putFRE writes one checked FRE at the start of q, which has room for
// maxFRESize bytes: its start address in as bytes, its info byte, then
// its words in wb bytes each, in big- or little-endian order. It returns
// the FRE's length. It is the one FRE writer of the package (AppendFDE,
// FDEWriter and MinWriter; MinWriter.AddSmall is its one-store form for
// the commonest FRE).
func putFRE(q []byte, as int, big bool, start uint32, info uint8, wb int, words []int32) int {
	switch {
	case as == 1:
		q[0] = uint8(start)
	case big && as == 2:
		binary.BigEndian.PutUint16(q, uint16(start))
	case as == 2:
		binary.LittleEndian.PutUint16(q, uint16(start))
	case big:
		binary.BigEndian.PutUint32(q, start)
	default:
		binary.LittleEndian.PutUint32(q, start)
	}
	q[as] = info
	p := as + 1
	switch {
	case wb == 1:
		for _, v := range words {
			q[p] = uint8(v)
			p++
		}
	case wb == 2 && big:
		for _, v := range words {
			binary.BigEndian.PutUint16(q[p:], uint16(v))
			p += 2
		}
	case wb == 2:
		for _, v := range words {
			binary.LittleEndian.PutUint16(q[p:], uint16(v))
			p += 2
		}
	case big:
		for _, v := range words {
			binary.BigEndian.PutUint32(q[p:], uint32(v))
			p += 4
		}
	default:
		for _, v := range words {
			binary.LittleEndian.PutUint32(q[p:], uint32(v))
			p += 4
		}
	}
	return p
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

func (w *FDEWriter) put16(b []byte, v uint16) {
	if w.big {
		binary.BigEndian.PutUint16(b, v)
	} else {
		binary.LittleEndian.PutUint16(b, v)
	}
}

// Len returns the number of FREs added so far.
func (w *FDEWriter) Len() int { return w.n }

// End writes the function's FRE count into its attribute record and
// appends its index entry to s.Index (FREOffset: the record's offset).
func (w *FDEWriter) End() error {
	s := w.s
	if uint64(len(s.FREData)) > math.MaxUint32 {
		w.Abort()
		return fmt.Errorf("append: FRE data past 4 GiB at FDE %d", len(s.Index))
	}
	w.put16(s.FREData[w.off:], uint16(w.n))
	s.FRECount += w.n
	s.Index = append(s.Index, IndexEntry{StartOffset: w.start, Size: w.size, FREOffset: uint32(w.off)})
	return nil
}

// Abort takes the function back: s.FREData ends where it did before
// BeginFDE.
func (w *FDEWriter) Abort() {
	w.s.FREData = w.s.FREData[:w.off]
}

// AppendCopy appends to s a function of the given
// size whose SFrame FDE is that of FDE i: a copy of its attribute record
// and FREs, placed after the records so far (so that the FRE data stays in
// index order, as GNU ld writes it), with start offset 0 (for the caller
// to set). The FREs must fit the new size: the last one may not start past
// it. For a function that lowers to the same FREs as an earlier one (most
// often, from the same CFI instructions).
func (s *Section) AppendCopy(i int, size uint32) error {
	f, err := s.Func(i)
	if err != nil {
		return err
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return fmt.Errorf("append: unknown ABI %d", uint8(s.Header.ABI))
	}
	start := int(f.FREOffset)
	n, nFREs, last, err := recordLen(s.FREData, start, order)
	if err != nil {
		return fmt.Errorf("append: FDE %d: %w", i, err)
	}
	if nFREs > 0 && last > size {
		return fmt.Errorf("append: FDE %d: its last FRE starts at %#x, past the size %#x", i, last, size)
	}
	off := len(s.FREData)
	if uint64(off)+uint64(n) > math.MaxUint32 {
		return fmt.Errorf("append: FRE data past 4 GiB at FDE %d", len(s.Index))
	}
	s.FREData = append(s.FREData, s.FREData[start:start+n]...)
	s.FRECount += nFREs
	s.Index = append(s.Index, IndexEntry{Size: size, FREOffset: uint32(off)})
	return nil
}

// NewSection returns a section with header h and the functions fdes, in
// that order, each appended with AppendFDE (their FREOffsets ignored).
func NewSection(h Header, fdes []FDE) (*Section, error) {
	s := &Section{Header: h}
	for i := range fdes {
		if err := s.AppendFDE(fdes[i]); err != nil {
			return nil, err // (it names the FDE)
		}
	}
	return s, nil
}
