package emit

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
)

// ShareFREs makes every function whose FRE data (in version 3, its
// attribute record and FREs: count, info bytes, rep size and every FRE
// byte; in version 2, its FREs and their type) is byte-identical to an
// earlier function's point at that copy, and leaves out the copies: the
// FRE sub-section then holds each distinct block once, in the order of
// its first use, and the header's FRE count still counts every
// function's FREs. Nothing else changes: the FDE index, its order and
// the start fields are the same. The SFrame format allows it (a
// function's FRE offset is a plain offset); docs/sharing.md lists the
// readers checked.
//
// A packed section's Packed is compacted in place (an entry's FREOffset
// then points at the first record with its bytes); an unpacked section
// gets SharedFREs and FREOffsets that say which functions share. It
// returns the number of functions that point at an earlier one's copy.
func (s *Section) ShareFREs() (int, error) {
	if s.Packed != nil {
		return s.sharePacked()
	}
	return s.shareFDEs()
}

// shareFDEs is ShareFREs of an unpacked section.
func (s *Section) shareFDEs() (int, error) {
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return 0, fmt.Errorf("share: unknown ABI %d", uint8(s.Header.ABI))
	}
	shared := 0
	v2 := s.Header.Version == Version2
	layout := s.layoutOrder()
	var buf []byte
	first := make(map[string]uint32, len(s.FDEs))
	for rank, i := range layout {
		f := &s.FDEs[i]
		if _, err := fdeDataSize(f, v2); err != nil {
			return 0, fmt.Errorf("share: FDE %d: %w", i, err)
		}
		buf = blockKey(buf[:0], order, f, v2)
		if len(f.FREs) == 0 && v2 {
			// No data: nothing to share.
			f.FREOffset = uint32(rank)
			continue
		}
		if off, ok := first[string(buf)]; ok {
			f.FREOffset = off
			shared++
			continue
		}
		f.FREOffset = uint32(rank)
		first[string(buf)] = f.FREOffset
	}
	s.SharedFREs = true
	return shared, nil
}

// blockKey appends to b what makes f's FRE data the same as another's:
// its bytes (version 3: attribute record and FREs), and in version 2,
// which has no attribute record, the FRE type.
func blockKey(b []byte, order binary.ByteOrder, f *FDE, v2 bool) []byte {
	if v2 {
		b = append(b, uint8(f.FREType()))
	} else {
		var attr [FDEAttrSize]byte
		order.PutUint16(attr[:], uint16(len(f.FREs)))
		attr[2], attr[3], attr[4] = f.Info, f.Info2, f.RepSize
		b = append(b, attr[:]...)
	}
	ft := f.FREType()
	for j := range f.FREs {
		var e [maxFRESize]byte
		n := putFRE(e[:], order, ft, &f.FREs[j])
		b = append(b, e[:n]...)
	}
	return b
}

// sameBlock reports whether FDEs f and g, with one FRE offset in a
// section with SharedFREs, have the same FRE data.
func sameBlock(f, g *FDE, v2 bool) bool {
	if f.FREType() != g.FREType() || len(f.FREs) != len(g.FREs) ||
		!v2 && (f.Info != g.Info || f.Info2 != g.Info2 || f.RepSize != g.RepSize) {
		return false
	}
	for j := range f.FREs {
		a, b := &f.FREs[j], &g.FREs[j]
		if a.StartAddr != b.StartAddr || a.Info != b.Info || !slices.Equal(a.Words, b.Words) {
			return false
		}
	}
	return true
}

// layoutOrder returns the FDEs' indices in the order Encode lays out
// their FRE data: by FREOffset, ties in index order.
func (s *Section) layoutOrder() []int {
	order := make([]int, len(s.FDEs))
	for i := range order {
		order[i] = i
	}
	// Ties broken by index make the order total, so the (faster) unstable
	// sort gives the stable order; Decode's offsets are often sorted already.
	byFREOffset := func(a, b int) int {
		if c := cmp.Compare(s.FDEs[a].FREOffset, s.FDEs[b].FREOffset); c != 0 {
			return c
		}
		return a - b
	}
	if !slices.IsSortedFunc(order, byFREOffset) {
		slices.SortFunc(order, byFREOffset)
	}
	return order
}

// layout returns where Encode writes each FDE's FRE data (offsets in the
// FRE sub-section, by FDE) and the sub-section's length, given each FDE's
// data size: one after the other in layoutOrder, but with SharedFREs one
// copy for the FDEs of one FREOffset, which must have the same data.
func (s *Section) layout(sizes []int, v2 bool) (offs []uint32, freLen uint64, err error) {
	offs = make([]uint32, len(s.FDEs))
	last := -1 // the FDE laid out last
	for _, i := range s.layoutOrder() {
		if s.SharedFREs && last >= 0 && s.FDEs[i].FREOffset == s.FDEs[last].FREOffset && sizes[i] > 0 {
			if !sameBlock(&s.FDEs[i], &s.FDEs[last], v2) {
				return nil, 0, fmt.Errorf("encode: FDE %d shares FDE %d's FRE offset %#x but not its FRE data", i, last, s.FDEs[i].FREOffset)
			}
			offs[i] = offs[last]
			continue
		}
		offs[i] = uint32(freLen)
		freLen += uint64(sizes[i])
		if sizes[i] > 0 {
			last = i
		}
	}
	return offs, freLen, nil
}

// sharePacked is ShareFREs of a packed section: an FRESharer when its
// records follow each other in index order (as AppendPacked, MinWriter
// and AppendPackedCopy append them), else the index walked in the order
// of its offsets (shared already, or built otherwise), each record's
// length read from its FREs.
func (s *Section) sharePacked() (int, error) {
	n := len(s.Index)
	increasing := true
	for i := 1; i < n && increasing; i++ {
		increasing = s.Index[i].FREOffset > s.Index[i-1].FREOffset
	}
	if increasing {
		return NewFRESharer(n).Share(s)
	}
	order, err := s.shareOrder()
	if err != nil {
		return 0, err
	}
	walk := make([]int, n)
	for k := range walk {
		walk[k] = k
	}
	slices.SortStableFunc(walk, func(a, b int) int { return cmp.Compare(s.Index[a].FREOffset, s.Index[b].FREOffset) })
	t := newShareTable(n)
	t.packed, t.order = s.Packed, order
	w, shared := 0, 0 // the compacted records end at w
	// The record before (by offset): where it was and went.
	prevOff, prevEnd, prevAt := -1, 0, 0
	for _, i := range walk {
		e := &s.Index[i]
		off := int(e.FREOffset)
		f, err := s.PackedFunc(i)
		if err != nil {
			return 0, err
		}
		m, _, _, err := packedRecord(s.Packed, off, order, f.FREType())
		if err != nil {
			return 0, fmt.Errorf("share: FDE %d: %w", i, err)
		}
		end := off + m
		switch {
		case off == prevOff:
			// Shared already: where the FDE before it went.
			e.FREOffset = uint32(prevAt)
			shared++
			continue
		case off < prevEnd:
			return 0, fmt.Errorf("share: FDE %d: FRE offset %#x inside another record", i, off)
		}
		at := t.add(s.Packed[off:end], w)
		prevOff, prevEnd, prevAt = off, end, at
		if at == w {
			copy(s.Packed[w:], s.Packed[off:end])
			w += end - off
		} else {
			shared++
		}
		e.FREOffset = uint32(at)
	}
	s.Packed = s.Packed[:w]
	return shared, nil
}

// shareOrder returns the byte order of a packed section that may be
// shared.
func (s *Section) shareOrder() (binary.ByteOrder, error) {
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return nil, fmt.Errorf("share: unknown ABI %d", uint8(s.Header.ABI))
	}
	if s.Header.Version != Version3 {
		return nil, fmt.Errorf("share: a packed section is version 3")
	}
	return order, nil
}

// FRESharer is ShareFREs of a packed section done in steps, while
// functions are appended to it: each call of Share shares the FRE data
// of the functions appended since the last call (the first call: all of
// them), whose records must follow each other in index order from the
// end of the section's FRE data at the last call (as AppendPacked,
// MinWriter and AppendPackedCopy append them). For a producer that has
// other work going on meanwhile: lower shares each part of a section as
// it joins it, while the other parts are lowered.
type FRESharer struct {
	t    shareTable
	next int // the first function not shared yet
}

// NewFRESharer returns an FRESharer for a section of about n functions.
func NewFRESharer(n int) *FRESharer {
	return &FRESharer{t: newShareTable(n)}
}

// Share shares the FRE data of the functions appended to s since the
// last call: each record that repeats an earlier one's bytes is left
// out, its function pointing at the earlier copy, and the others move
// down over those left out. It returns how many were left out.
func (sh *FRESharer) Share(s *Section) (int, error) {
	order, err := s.shareOrder()
	if err != nil {
		return 0, err
	}
	t := &sh.t
	t.packed, t.order = s.Packed, order
	n := len(s.Index)
	w, shared := t.end, 0 // the compacted records end at w
	for i := sh.next; i < n; i++ {
		e := &s.Index[i]
		off, end := int(e.FREOffset), len(s.Packed)
		if i+1 < n {
			end = int(s.Index[i+1].FREOffset)
		}
		if off < t.end || off+FDEAttrSize > end || end > len(s.Packed) {
			return 0, fmt.Errorf("share: FDE %d: FRE offset %#x not after the records before it", i, off)
		}
		at := t.add(s.Packed[off:end], w)
		if at == w {
			copy(s.Packed[w:], s.Packed[off:end])
			w += end - off
		} else {
			shared++
		}
		e.FREOffset = uint32(at)
		t.end = end // of the records read (in the bytes before moving)
	}
	s.Packed = s.Packed[:w]
	t.packed, t.end = s.Packed, w
	sh.next = n
	return shared, nil
}

// shareTable finds the distinct records of sharePacked: an open-addressing
// table whose slots hold 32 bits of a record's hash and its offset in the
// compacted records (plus one; 0 is empty). A record's bytes say how long
// it is (its FRE count, FRE type and info bytes), so a record that starts
// with b's bytes is b.
type shareTable struct {
	seed   maphash.Seed
	slots  []uint64
	packed []byte // the compacted records, as far as they go
	order  binary.ByteOrder
	used   int
	end    int // FRESharer: where the records shared so far end
}

// newShareTable returns a table for about n records. About one record in
// three is distinct on big C++ libraries: the table stays in the
// processor's caches, and grows when it must.
func newShareTable(n int) shareTable {
	size := 1024
	for size < n/2 {
		size *= 2
	}
	return shareTable{seed: maphash.MakeSeed(), slots: make([]uint64, size)}
}

// add returns where the record b is: at an earlier record with its
// bytes, or at w, where the caller moves it.
func (t *shareTable) add(b []byte, w int) int {
	h := maphash.Bytes(t.seed, b)
	mask := uint64(len(t.slots) - 1)
	for k := h & mask; ; k = (k + 1) & mask {
		s := t.slots[k]
		if s == 0 {
			t.slots[k] = h>>32<<32 | uint64(w+1)
			if t.used++; 2*t.used > len(t.slots) {
				t.grow()
			}
			return w
		}
		if s>>32 == h>>32 {
			at := int(uint32(s)) - 1
			if at+len(b) <= w && bytes.Equal(t.packed[at:at+len(b)], b) {
				return at
			}
		}
	}
}

// grow doubles the table, rehashing each record from its bytes.
func (t *shareTable) grow() {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		// The slot has 32 bits of the hash; the table's index needs
		// its low bits: hash the record again.
		at := int(uint32(s)) - 1
		n, _, _, _ := packedRecord(t.packed, at, t.order, FDE{Info: t.packed[at+2]}.FREType())
		h := maphash.Bytes(t.seed, t.packed[at:at+n])
		k := h & mask
		for t.slots[k] != 0 {
			k = (k + 1) & mask
		}
		t.slots[k] = s
	}
}
