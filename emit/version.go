package emit

import "fmt"

// SetVersion converts the section to format version v (2 or 3) in place,
// keeping every function's absolute start: with FlagFDEFuncStartPCRel the
// stored offsets are relative to their field, whose position depends on the
// FDE entry size (20 bytes in version 2, 16 in version 3).
//
// Version 2 has no flex FDEs and 32-bit start offsets: converting a section
// that needs either fails and leaves it unchanged. FlagFramePointer exists
// only in version 2 and is cleared when converting to version 3. A packed
// section (always version 3) converted to version 2 leaves the packed form:
// its functions go to FDEs, decoded as Section.FDE gives them.
func (s *Section) SetVersion(v uint8) error {
	if v != Version2 && v != Version3 {
		return fmt.Errorf("unsupported version %d", v)
	}
	if v == s.Header.Version {
		return nil
	}
	fdes, err := s.functions()
	if err != nil {
		return err
	}
	starts := make([]uint64, len(fdes))
	for i := range fdes {
		starts[i] = s.FuncStart(i, 0)
	}
	old := s.Header
	s.Header.Version = v
	if v == Version3 {
		s.Header.Flags &^= FlagFramePointer
	}
	for i := range fdes {
		f := &fdes[i]
		if v == Version2 && f.Info2 != 0 {
			s.Header = old
			return fmt.Errorf("FDE %d: %s cannot be written in version 2", i, f.Type())
		}
		rel := starts[i] - uint64(s.FieldOffset(i))
		if s.Header.Flags&FlagFDEFuncStartPCRel == 0 {
			rel = starts[i]
		}
		if v == Version2 && int64(rel) != int64(int32(rel)) {
			s.Header = old
			return fmt.Errorf("FDE %d: start offset %#x does not fit the 32-bit version 2 field", i, int64(rel))
		}
	}
	s.setFDEs(fdes)
	for i := range fdes {
		s.SetFuncStart(i, starts[i], 0)
	}
	return nil
}

// setFDEs makes fdes, the functions of s (Section.functions), its FDEs: a
// packed section's leave Index and Packed, those that share a record
// (the same FREOffset) sharing their FRE data (SharedFREs).
func (s *Section) setFDEs(fdes []FDE) {
	if len(s.Index) > 0 {
		seen := make(map[uint32]bool, len(s.Index))
		for _, e := range s.Index {
			s.SharedFREs = s.SharedFREs || seen[e.FREOffset]
			seen[e.FREOffset] = true
		}
	}
	s.FDEs, s.Packed, s.Index, s.PackedFREs = fdes, nil, nil, 0
}
