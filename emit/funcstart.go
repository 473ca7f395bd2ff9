package emit

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
