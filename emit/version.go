package emit

import "fmt"

// SetVersion converts the section to format version v (2 or 3) in place,
// keeping every function's absolute start: with FlagFDEFuncStartPCRel the
// stored offsets are relative to their field, whose position depends on the
// FDE entry size (20 bytes in version 2, 16 in version 3).
//
// Version 2 has no flex FDEs and 32-bit start offsets: converting a section
// that needs either fails and leaves it unchanged. FlagFramePointer exists
// only in version 2 and is cleared when converting to version 3.
func (s *Section) SetVersion(v uint8) error {
	if v != Version2 && v != Version3 {
		return fmt.Errorf("unsupported version %d", v)
	}
	if v == s.Header.Version {
		return nil
	}
	starts := make([]uint64, len(s.FDEs))
	for i := range s.FDEs {
		starts[i] = s.FuncStart(i, 0)
	}
	old := s.Header
	s.Header.Version = v
	if v == Version3 {
		s.Header.Flags &^= FlagFramePointer
	}
	for i := range s.FDEs {
		f := &s.FDEs[i]
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
	for i := range s.FDEs {
		s.SetFuncStart(i, starts[i], 0)
	}
	return nil
}
