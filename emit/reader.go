package emit

import (
	"cmp"
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
	// starts are the functions' absolute starts in address order, funcs
	// the same functions. top holds every topStride-th start: a search
	// reads it (small enough to stay in the cache), then one block of
	// starts.
	starts []uint64
	top    []uint64
	funcs  []readerFunc
	// fres are every function's FREs, one function after the other in
	// address order, with what a lookup reads of them: a function's FREs
	// are in a few adjacent cache lines, not behind the decoded section's
	// pointers.
	fres []readerFRE
}

// readerFunc is what a lookup reads of one function.
type readerFunc struct {
	fde         int32  // index of the FDE in the section
	size        uint32 // the function's size
	fre, numFRE uint32 // its FREs in Reader.fres
	info, info2 uint8  // the FDE's info bytes
	rep         uint8  // the repeat size of a PCMASK function
}

// readerFRE is an FRE's start offset, info byte and up to three data words
// (default FDEs have at most three; an FRE with more is read from the
// section).
type readerFRE struct {
	start uint32
	info  uint8
	n     uint8
	words [3]int32
}

// topStride is how many starts a block of Reader.top covers. On
// libLLVM.so's section (160,806 functions, 2.3 million shuffled PCs,
// testdata/bench-lookup.sh) a Lookup is mostly cache misses: one binary
// search over all the starts and the decoded section's FDEs and FREs took
// about 790 ns per Lookup; the two levels (64) with the compact function
// and FRE tables about 450, with 8 about 400-440.
const topStride = 8

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
	order := make([]int, len(s.FDEs))
	starts := make([]uint64, len(s.FDEs))
	numFREs := 0
	for i := range s.FDEs {
		order[i], starts[i] = i, s.FuncStart(i, sectionAddr)
		numFREs += len(s.FDEs[i].FREs)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(starts[a], starts[b]) })
	r := &Reader{
		sec: s, addr: sectionAddr,
		starts: make([]uint64, len(order)),
		funcs:  make([]readerFunc, len(order)),
		fres:   make([]readerFRE, 0, numFREs),
	}
	for k, i := range order {
		f := &s.FDEs[i]
		r.starts[k] = starts[i]
		r.funcs[k] = readerFunc{fde: int32(i), size: f.Size, fre: uint32(len(r.fres)), numFRE: uint32(len(f.FREs)),
			info: f.Info, info2: f.Info2, rep: f.RepSize}
		for _, e := range f.FREs {
			rf := readerFRE{start: e.StartAddr, info: e.Info, n: uint8(min(len(e.Words), 4))}
			copy(rf.words[:], e.Words)
			r.fres = append(r.fres, rf)
		}
	}
	for k := 0; k < len(r.starts); k += topStride {
		r.top = append(r.top, r.starts[k])
	}
	return r
}

// countAtOrBelow returns how many of the sorted xs are <= v.
func countAtOrBelow(xs []uint64, v uint64) int {
	lo, hi := 0, len(xs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if xs[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
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
func (r *Reader) NumFuncs() int { return len(r.starts) }

// Func returns the i-th function in address order.
func (r *Reader) Func(i int) Func {
	k := int(r.funcs[i].fde)
	return Func{Start: r.starts[i], FDE: &r.sec.FDEs[k], Index: k}
}

// Find returns the FDE (its index in the section) and the FRE (its index
// in the function) that cover pc. It reports false when no function covers
// pc, or when the function has no FRE for it (a PC before its first FRE).
// PCMASK functions (PLT stubs) match their FREs on the PC's offset modulo
// their repeat size, as the specification says; a repeat size of 0 matches
// nothing. Find allocates nothing.
func (r *Reader) Find(pc uint64) (fde, fre int, ok bool) {
	k, j, ok := r.find(pc)
	if !ok {
		return 0, 0, false
	}
	return int(r.funcs[k].fde), j, true
}

// find returns the function (its place in address order) and the FRE (its
// index in the function) that cover pc.
func (r *Reader) find(pc uint64) (k, j int, ok bool) {
	// The last function starting at or before pc: its block in top,
	// then its place in the block.
	t := countAtOrBelow(r.top, pc)
	if t == 0 {
		return 0, 0, false
	}
	lo := (t - 1) * topStride
	k = lo + countAtOrBelow(r.starts[lo:min(lo+topStride, len(r.starts))], pc) - 1
	f := &r.funcs[k]
	off := pc - r.starts[k]
	if off >= uint64(f.size) {
		return 0, 0, false
	}
	if (FDE{Info: f.info}).PCType() == PCMask {
		if f.rep == 0 {
			return 0, 0, false
		}
		off %= uint64(f.rep)
	}
	// The last FRE starting at or before off.
	fres := r.fres[f.fre : f.fre+f.numFRE]
	lo, hi := 0, len(fres)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint64(fres[m].start) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, 0, false
	}
	return k, lo - 1, true
}

// Lookup finds the function and FRE that cover pc (as Find) and says what
// the FRE means (Header.Frame). It reports false where Find does, and for
// an FRE whose data words do not fit its FDE type. Lookup allocates
// nothing.
func (r *Reader) Lookup(pc uint64) (Lookup, bool) {
	k, j, ok := r.find(pc)
	if !ok {
		return Lookup{}, false
	}
	f := &r.funcs[k]
	fde := FDE{Info: f.info, Info2: f.info2}
	rf := &r.fres[f.fre+uint32(j)]
	e := FRE{Info: rf.info, Words: rf.words[:min(rf.n, 3)]}
	if rf.n > 3 {
		e = r.sec.FDEs[f.fde].FREs[j]
	}
	fr, err := r.sec.Header.Frame(&fde, &e)
	if err != nil {
		return Lookup{}, false
	}
	return Lookup{Frame: fr, Func: int(f.fde), FRE: j, Start: r.starts[k]}, true
}
