package emit

import (
	"debug/elf"
	"fmt"
	"slices"
)

// Reader answers a stack walker's question about an SFrame section: for a
// program counter, how to find the caller's frame. It decodes the section
// once (version 2 or 3, either byte order, functions sharing FRE blocks
// too) and then looks up PCs without allocating.
type Reader struct {
	sec  *Section
	addr uint64
	// funcs are the functions by start address: the absolute start and
	// the index of the FDE (sorted once when the section's index is not).
	funcs []readerFunc
}

type readerFunc struct {
	start uint64
	end   uint64 // start + size
	fde   int
}

// Func is one function of a section as Reader.Funcs gives it.
type Func struct {
	Start uint64 // absolute start address
	FDE   *FDE   // its FDE: size, type, FREs
	Index int    // its position in the section's FDE index
}

// Lookup is the answer to Reader.Lookup: the function and FRE that cover
// the PC, and what the FRE means.
type Lookup struct {
	Frame
	Func  int    // index of the FDE in the section
	FRE   int    // index of the FRE in the function
	Start uint64 // absolute start address of the function
}

// NewReader decodes an SFrame section (its bytes, as they are in the file)
// that is loaded at sectionAddr: function start fields are relative to the
// section (or to themselves), so the address is what makes them absolute.
func NewReader(data []byte, sectionAddr uint64) (*Reader, error) {
	s, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return ReaderFor(s, sectionAddr), nil
}

// ReaderFor makes a Reader for a section already decoded (not packed),
// loaded at sectionAddr. The Reader keeps s: s must not change afterwards.
func ReaderFor(s *Section, sectionAddr uint64) *Reader {
	r := &Reader{sec: s, addr: sectionAddr, funcs: make([]readerFunc, len(s.FDEs))}
	sorted := true
	for i := range s.FDEs {
		st := s.FuncStart(i, sectionAddr)
		r.funcs[i] = readerFunc{start: st, end: st + uint64(s.FDEs[i].Size), fde: i}
		if i > 0 && st < r.funcs[i-1].start {
			sorted = false
		}
	}
	if !sorted {
		slices.SortStableFunc(r.funcs, func(a, b readerFunc) int {
			switch {
			case a.start < b.start:
				return -1
			case a.start > b.start:
				return 1
			}
			return 0
		})
	}
	return r
}

// ReaderFromELF reads the SFrame section of an ELF file (ReadELFSection):
// at its address in a linked file; in a relocatable object with its
// relocations applied, every section at address 0, as objdump reads it.
func ReaderFromELF(f *elf.File) (*Reader, error) {
	sec, data, err := ReadELFSection(f)
	if err != nil {
		return nil, err
	}
	addr := sec.Addr
	if f.Type == elf.ET_REL {
		addr = 0
	}
	r, err := NewReader(data, addr)
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", sec.Name, err)
	}
	return r, nil
}

// Section returns the decoded section.
func (r *Reader) Section() *Section { return r.sec }

// NumFuncs returns the number of functions in the section.
func (r *Reader) NumFuncs() int { return len(r.funcs) }

// Func returns the i-th function in address order.
func (r *Reader) Func(i int) Func {
	f := r.funcs[i]
	return Func{Start: f.start, FDE: &r.sec.FDEs[f.fde], Index: f.fde}
}

// Find returns the FDE (its index in the section) and the FRE (its index
// in the function) that cover pc. It reports false when no function covers
// pc, or when the function has no FRE for it (a PC before its first FRE).
// PCMASK functions (PLT stubs) match their FREs on the PC's offset modulo
// their repeat size, as the specification says; a repeat size of 0 matches
// nothing. Find allocates nothing.
func (r *Reader) Find(pc uint64) (fde, fre int, ok bool) {
	// The last function starting at or before pc.
	lo, hi := 0, len(r.funcs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.funcs[m].start <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, 0, false
	}
	rf := &r.funcs[lo-1]
	if pc >= rf.end {
		return 0, 0, false
	}
	f := &r.sec.FDEs[rf.fde]
	off := pc - rf.start
	if f.PCType() == PCMask {
		if f.RepSize == 0 {
			return 0, 0, false
		}
		off %= uint64(f.RepSize)
	}
	// The last FRE starting at or before off.
	fres := f.FREs
	lo, hi = 0, len(fres)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint64(fres[m].StartAddr) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, 0, false
	}
	return rf.fde, lo - 1, true
}

// Lookup finds the function and FRE that cover pc (as Find) and says what
// the FRE means (Header.Frame). It reports false where Find does, and for
// an FRE whose data words do not fit its FDE type. Lookup allocates
// nothing.
func (r *Reader) Lookup(pc uint64) (Lookup, bool) {
	i, j, ok := r.Find(pc)
	if !ok {
		return Lookup{}, false
	}
	f := &r.sec.FDEs[i]
	fr, err := r.sec.Header.Frame(f, &f.FREs[j])
	if err != nil {
		return Lookup{}, false
	}
	return Lookup{Frame: fr, Func: i, FRE: j, Start: r.sec.FuncStart(i, r.addr)}, true
}
