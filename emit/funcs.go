package emit

import "fmt"

// FDE returns function i of s (in index order) with its FREs, whichever
// form s holds it in: of a plain section FDEs[i], its FREs not copied; of
// a packed one its index entry and attribute record, its FREs decoded from
// Packed as Decode decodes them from the encoded section. So Dump,
// DumpJSON and ReaderFor read both forms the same way. An error says the
// function does not exist or its packed record is malformed.
func (s *Section) FDE(i int) (FDE, error) {
	if s.Packed == nil {
		if i < 0 || i >= len(s.FDEs) {
			return FDE{}, fmt.Errorf("no FDE %d (%d FDEs)", i, len(s.FDEs))
		}
		return s.FDEs[i], nil
	}
	d, err := s.packedDecoder()
	if err != nil {
		return FDE{}, err
	}
	return d.packedFDE(i)
}

// NumFREs returns the number of FREs of s's functions, of either form, as
// the header counts them: an FRE block shared by several functions once
// for each.
func (s *Section) NumFREs() int {
	n := s.PackedFREs // 0 in a plain section, whose FDEs a packed one lacks
	for i := range s.FDEs {
		n += len(s.FDEs[i].FREs)
	}
	return n
}

// functions returns every function of s with its FREs, in index order:
// FDEs itself for a plain section, decoded from Packed (FDE) for a packed
// one.
func (s *Section) functions() ([]FDE, error) {
	if s.Packed == nil {
		return s.FDEs, nil
	}
	d, err := s.packedDecoder()
	if err != nil {
		return nil, err
	}
	fdes := make([]FDE, len(s.Index))
	for i := range fdes {
		if fdes[i], err = d.packedFDE(i); err != nil {
			return nil, err
		}
	}
	return fdes, nil
}

// packedDecoder returns a decoder of the packed section s's FRE data.
func (s *Section) packedDecoder() (*decoder, error) {
	if s.Header.Version != Version3 {
		return nil, fmt.Errorf("packed section: version %d (only 3)", s.Header.Version)
	}
	order := s.Header.ABI.ByteOrder()
	if order == nil {
		return nil, fmt.Errorf("packed section: unknown ABI %d", uint8(s.Header.ABI))
	}
	return &decoder{sec: s, data: s.Packed, order: order}, nil
}

// packedFDE decodes function i of the packed section d.sec: its index
// entry, its attribute record and its FREs, with Decode's checks (FRE
// start addresses, data-word sizes and counts, the record within Packed).
func (d *decoder) packedFDE(i int) (FDE, error) {
	f, err := d.sec.PackedFunc(i)
	if err != nil {
		return FDE{}, err
	}
	attr := int(f.FREOffset)
	n := int(d.u16(attr))
	// Each FRE takes at least 2 bytes: the slab is bounded by the bytes
	// there are, freList refusing a count they cannot hold.
	d.freBudget = uint64(n)
	d.freSlab = make([]FRE, min(n, len(d.data)/2))
	if _, err := d.freList(&f, i, attr+2, attr+FDEAttrSize, len(d.data), n); err != nil {
		return FDE{}, fmt.Errorf("packed FRE data: %w", err)
	}
	return f, nil
}
