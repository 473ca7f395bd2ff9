package emit

import "slices"

// FieldOffset is the offset from the start of the section of FDE i's start
// address field, as libsframe computes it: header (with auxiliary header)
// plus i index entries (16 bytes in version 3, 20 in version 2). It
// ignores sfh_fdeoff, which gas and ld always write as 0.
func (s *Section) FieldOffset(i int) int64 {
	ent := int64(FDEIndexEntrySize)
	if s.Header.Version == Version2 {
		ent = FDEEntrySizeV2
	}
	return int64(HeaderSize+len(s.Header.AuxHeader)) + int64(i)*ent
}

// FuncStart is the absolute start address of FDE i's function when the
// section is at sectionAddr: with FlagFDEFuncStartPCRel the stored offset
// is relative to its own field, else to the section start. The arithmetic
// wraps modulo 2^64, as in libsframe.
func (s *Section) FuncStart(i int, sectionAddr uint64) uint64 {
	a := sectionAddr + uint64(*s.startOffset(i))
	if s.Header.Flags&FlagFDEFuncStartPCRel != 0 {
		a += uint64(s.FieldOffset(i))
	}
	return a
}

// SetFuncStart stores the absolute function start addr in FDE i, for a
// section at sectionAddr (the inverse of FuncStart).
func (s *Section) SetFuncStart(i int, addr, sectionAddr uint64) {
	v := addr - sectionAddr
	if s.Header.Flags&FlagFDEFuncStartPCRel != 0 {
		v -= uint64(s.FieldOffset(i))
	}
	*s.startOffset(i) = int64(v)
}

// startOffset is where FDE i's StartOffset is.
func (s *Section) startOffset(i int) *int64 {
	return &s.Index[i].StartOffset
}

// SortByStart sorts the FDE index by function start, as ld's
// sframe_sort_funcdesc does for linked outputs: starts are compared as
// signed section-relative offsets, the sort is stable, StartOffsets are
// recomputed for the new positions,
// and FlagFDESorted is set. FRE data order is unchanged: FREOffset keys are
// kept, so Encode keeps the functions' data in insertion order.
//
// ld's qsort is glibc's merge sort, stable in practice: functions with
// equal starts keep their insertion order. So with the FDEs in ld's insertion
// order (input sections in link order, then PLT), the result is ld's byte
// for byte, ties included (checked on testdata/link).
func (s *Section) SortByStart(sectionAddr uint64) {
	type ent struct {
		rel int64 // section-relative start
		i   int   // the FDE's index before
	}
	ents := make([]ent, s.NumFDEs())
	for i := range ents {
		ents[i] = ent{int64(s.FuncStart(i, 0)), i}
	}
	slices.SortStableFunc(ents, func(a, b ent) int {
		switch {
		case a.rel < b.rel:
			return -1
		case a.rel > b.rel:
			return 1
		}
		return 0
	})
	index := slices.Clone(s.Index)
	for j, e := range ents {
		s.Index[j] = index[e.i]
	}
	for j, e := range ents {
		s.SetFuncStart(j, uint64(e.rel), 0)
	}
	s.Header.Flags |= FlagFDESorted
	_ = sectionAddr // the order does not depend on where the section is
}
