package emit

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
)

// ShareFREs makes every function whose FRE data (its attribute record
// and FREs: count, info bytes, rep size and every FRE byte) is
// byte-identical to an earlier function's point at that copy, and leaves
// out the copies: FREData then holds each distinct record once, in the
// order of its first use, and the header's FRE count still counts every
// function's FREs. Nothing else changes: the FDE index, its order and
// the start fields are the same. The SFrame format allows it (a
// function's FRE offset is a plain offset); docs/sharing.md lists the
// readers checked. In version 2, which has no attribute records, the
// records of functions without FREs are not shared (each has its own
// offset), and SharedV2 is set: FREs that repeat an earlier function's
// under another info or rep size are written once too. It returns the number of functions that point at an earlier
// one's copy.
func (s *Section) ShareFREs() (int, error) {
	n := len(s.Index)
	increasing := true
	for i := 1; i < n && increasing; i++ {
		increasing = s.Index[i].FREOffset > s.Index[i-1].FREOffset
	}
	// Version 2 writes FREs that repeat an earlier record's once, also
	// under another info or rep size.
	s.SharedV2 = s.SharedV2 || s.Header.Version == Version2
	if increasing {
		return NewFRESharer(n).Share(s)
	}
	return s.shareInOffsetOrder()
}

// shareInOffsetOrder is ShareFREs of a section whose records do not
// follow each other in index order (shared already, sorted, or decoded):
// the index walked in the order of its offsets, each record's length read
// from its FREs. (Otherwise an FRESharer shares it.)
func (s *Section) shareInOffsetOrder() (int, error) {
	n := len(s.Index)
	order, err := s.shareOrder()
	if err != nil {
		return 0, err
	}
	walk := make([]int, n)
	for k := range walk {
		walk[k] = k
	}
	slices.SortStableFunc(walk, func(a, b int) int { return cmp.Compare(s.Index[a].FREOffset, s.Index[b].FREOffset) })
	t := newShareTable(make([]uint64, tableSize(n)))
	t.packed, t.v2 = s.FREData[:0], s.Header.Version == Version2
	shared := 0
	// The record before (by offset): where it was and went.
	prevOff, prevEnd, prevAt := -1, 0, 0
	for _, i := range walk {
		e := &s.Index[i]
		off := int(e.FREOffset)
		m, _, _, err := recordLen(s.FREData, off, order)
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
		at, repeat := t.keep(s.FREData[off:end])
		prevOff, prevEnd, prevAt = off, end, at
		if repeat {
			shared++
		}
		e.FREOffset = uint32(at)
	}
	s.FREData = t.packed
	return shared, nil
}

// shareOrder returns the byte order of a section that may be shared.
func (s *Section) shareOrder() (binary.ByteOrder, error) {
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return nil, fmt.Errorf("share: unknown ABI %d", uint8(s.Header.ABI))
	}
	if v := s.Header.Version; v != Version3 && v != Version2 {
		return nil, fmt.Errorf("share: unsupported version %d", v)
	}
	return order, nil
}

// FRESharer is ShareFREs of a section done in steps, while
// functions are appended to it: each call of Share shares the FRE data
// of the functions appended since the last call (the first call: all of
// them), whose records must follow each other in index order from the
// end of the section's FRE data at the last call (as AppendFDE,
// MinWriter and AppendCopy append them), or, with Append, of the
// functions whose records the caller gives where they are. For a
// producer that has other work going on meanwhile: lower shares each
// part of a section as it joins it, while the other parts are lowered.
type FRESharer struct {
	t    shareTable
	next int // the first function not shared yet
}

// NewFRESharer returns an FRESharer for a section of about n functions.
func NewFRESharer(n int) *FRESharer {
	return &FRESharer{t: newShareTable(make([]uint64, tableSize(n)))}
}

// Share shares the FRE data of the functions appended to s since the
// last call: each record that repeats an earlier one's bytes is left
// out, its function pointing at the earlier copy, and the others move
// down over those left out. It returns how many were left out.
func (sh *FRESharer) Share(s *Section) (int, error) {
	if _, err := s.shareOrder(); err != nil {
		return 0, err
	}
	// The records to share follow those shared (t.end) in s's FRE data.
	end := sh.t.end
	if end > len(s.FREData) {
		return 0, fmt.Errorf("share: FRE data cut to %#x bytes, shorter than the %#x shared", len(s.FREData), end)
	}
	sh.t.packed = s.FREData[:end]
	return sh.share(s, s.Index[sh.next:], s.FREData[end:], uint32(end))
}

// Append shares the FRE data of the last n functions of s's index, the
// records of data (their FRE offsets are data's, the records following
// each other in index order), as Share would had the records been
// appended to s's FRE data first: each record that repeats an earlier
// one's bytes is left out, the others are appended to s's FRE data
// (data may lie in its array past its length: the records then move
// down). The functions before those n must be shared. It returns how
// many were left out. (lower joins the parts it lowers in parallel this
// way: each part's records are read once, where its worker wrote them.)
func (sh *FRESharer) Append(s *Section, n int, data []byte) (int, error) {
	if _, err := s.shareOrder(); err != nil {
		return 0, err
	}
	first := len(s.Index) - n
	if n < 0 || sh.next != first || sh.t.end != len(s.FREData) {
		return 0, fmt.Errorf("share: %d functions and %d bytes of FRE data appended and not shared", first-sh.next, len(s.FREData)-sh.t.end)
	}
	sh.t.packed = s.FREData
	return sh.share(s, s.Index[first:], data, 0)
}

// share shares the records of data, the FRE data of index (the end of
// s's index): each record goes at the end of the compacted records
// sh.t.packed, or at an earlier one with its bytes. An index entry's FRE
// offset minus base is its record's offset in data.
func (sh *FRESharer) share(s *Section, index []IndexEntry, data []byte, base uint32) (int, error) {
	t := &sh.t
	t.v2 = s.Header.Version == Version2
	shared, read := 0, 0 // the records of data read end at read
	for i := range index {
		e := &index[i]
		off, end := int(e.FREOffset-base), len(data)
		if i+1 < len(index) {
			end = int(index[i+1].FREOffset - base)
		}
		if off < read || off+FDEAttrSize > end || end > len(data) {
			return 0, fmt.Errorf("share: FDE %d: FRE offset %#x not after the records before it", sh.next+i, e.FREOffset)
		}
		at, repeat := t.keep(data[off:end])
		if repeat {
			shared++
		}
		e.FREOffset = uint32(at)
		read = end
	}
	s.FREData = t.packed
	t.end = len(t.packed)
	sh.next = len(s.Index)
	return shared, nil
}

// shareTable finds the distinct records of ShareFREs: an open-addressing
// table whose slots hold the high 32 bits of a record's hash, which also
// give its place in the table, and its offset in the compacted records
// (plus one; 0 is empty). Growing the table moves each slot by the bits it
// holds, without reading its record again. A record's bytes say how long
// it is (its FRE count, FRE type and info bytes), so a record that starts
// with b's bytes is b.
type shareTable struct {
	seed   maphash.Seed
	slots  []uint64
	packed []byte // the compacted records, as far as they go
	used   int
	end    int  // FRESharer: where the records shared so far end
	v2     bool // a version 2 section: records without FREs are not shared
}

// newShareTable returns an empty table in slots (zero, a power of two
// long: tableSize).
func newShareTable(slots []uint64) shareTable {
	writeFirst(slots)
	return shareTable{seed: maphash.MakeSeed(), slots: slots}
}

// writeFirst writes a zero into each 4 KiB page of slots, so that the
// first touch of a fresh page is a write. keep reads a slot before it
// writes one: a fresh page read first is the kernel's shared zero page,
// and the write that follows copies it and flushes the other CPUs' TLBs
// (an interprocessor interrupt, dear on a virtual machine;
// docs/performance.md, "What each mechanism is worth").
func writeFirst(slots []uint64) {
	const perPage = 4096 / 8
	for i := 0; i < len(slots); i += perPage {
		slots[i] = 0
	}
}

// tableSize is the number of slots of a table for about n records: a
// power of two, at least 64. About one record in three is distinct on
// big C++ libraries: the table is kept small (it grows when it must); a
// small library's is 512 bytes, not a page or two to clear.
func tableSize(n int) int {
	size := 64
	for size < n/2 {
		size *= 2
	}
	return size
}

// keep returns where the record rec is in the compacted records
// t.packed: at an earlier record with its bytes (repeat), or at their
// end, rec appended to them (rec may lie in their array past their end).
func (t *shareTable) keep(rec []byte) (at int, repeat bool) {
	w := len(t.packed)
	if t.v2 && len(rec) == FDEAttrSize {
		t.packed = append(t.packed, rec...)
		return w, false
	}
	h := maphash.Bytes(t.seed, rec)
	slots, mask := t.slots, uint64(len(t.slots)-1)
	k := h >> 32 & mask
	for ; slots[k] != 0; k = (k + 1) & mask {
		if s := slots[k]; s>>32 == h>>32 {
			at := int(uint32(s)) - 1
			if at+len(rec) <= w && bytes.Equal(t.packed[at:at+len(rec)], rec) {
				return at, true
			}
		}
	}
	slots[k] = h>>32<<32 | uint64(w+1)
	t.packed = append(t.packed, rec...)
	if t.used++; 2*t.used > len(slots) {
		t.grow()
	}
	return w, false
}

// grow doubles the table, each slot moved to the place its hash bits
// give in the bigger one.
func (t *shareTable) grow() {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	writeFirst(t.slots)
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		k := s >> 32 & mask
		for t.slots[k] != 0 {
			k = (k + 1) & mask
		}
		t.slots[k] = s
	}
}
