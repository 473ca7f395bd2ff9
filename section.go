package sframegen

import (
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
	"github.com/sframe-gen/sframe-gen/lower"
)

// Section is a generated SFrame section.
type Section struct {
	// Addr is the address the bytes assume: where the section is (or
	// would be) put in a linked file, its function start fields being
	// PC-relative. 0 for a relocatable object, whose start fields Relocs
	// fill at link time.
	Addr uint64
	// Relocs are, for a relocatable object, the .rela.sframe entries.
	Relocs []elfpatch.Reloc
	// Target is the file's ABI.
	Target lower.Target
	// EntryErrors are the CFI entries that could not be read.
	EntryErrors []*cfi.EntryError
	// Shared says whether functions with the same FRE data share one
	// block of it; when they do not, Unshared says why (Options.Share).
	Shared   bool
	Unshared string
	// Layout is, for a linked file written, where the section went and
	// what the patch changed besides.
	Layout elfpatch.Layout

	result *lower.Result
	place  func()   // puts result in the order of the bytes (nil: done)
	parts  [][]byte // the encoded bytes, in pieces (nil: not encoded)
	// names are the file's function symbols (Resources.Names), or nil.
	names *target.Symbols
}

// Result returns the lowered section: its functions (Result().Section,
// what the bytes hold once encoded: a linked file's placed at Addr, its
// index sorted), and in Result().Skipped those left out (or kept without
// FREs) with the reason. A linked file's functions are put in the order
// of the bytes on the first call, not before: a caller that only writes
// the bytes does without it.
func (s *Section) Result() *lower.Result {
	if s.place != nil {
		s.place()
		s.place = nil
	}
	return s.result
}

// NumFDEs is the number of functions with an SFrame FDE in the section.
func (s *Section) NumFDEs() int { return s.result.Section.NumFDEs() }

// NumFREs is the number of FREs of the section.
func (s *Section) NumFREs() int { return s.result.Section.NumFREs() }

// SharedFDEs is the number of functions whose FRE data repeats an earlier
// one's, shared with it (Shared).
func (s *Section) SharedFDEs() int { return s.result.Shared }

// Omitted returns, in CFI order, the functions left without an SFrame FDE
// and those kept without FREs (signal frames: Skip.Emitted), each with
// the reason.
func (s *Section) Omitted() []lower.Skip { return s.result.Skipped }

// Bytes returns the section's bytes, encoded for Addr (nil before it is
// encoded: [Generate] and [Generator.Process] encode it).
func (s *Section) Bytes() []byte {
	if len(s.parts) > 1 {
		var data []byte
		for _, p := range s.parts {
			data = append(data, p...)
		}
		s.parts = [][]byte{data}
	}
	if len(s.parts) == 0 {
		return nil
	}
	return s.parts[0]
}

// Size is the number of bytes of the encoded section.
func (s *Section) Size() int {
	n := 0
	for _, p := range s.parts {
		n += len(p)
	}
	return n
}

// WriteTo writes the section's bytes to w, piece by piece, without
// joining them first.
func (s *Section) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range s.parts {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// V2Refusal says why version 2 (in binutils 2.45's layout) cannot express
// the function of f, the FDE at index i of the version 3 section, as
// decoded from its bytes; "" when it can, or f is a PLT stub's.
func (s *Section) V2Refusal(i int, f *emit.FDE) string {
	if res := s.Result(); i < len(res.Sources) && res.Sources[i] == nil {
		return "" // a PLT stub's
	}
	return lower.V2Refusal(s.Target, lower.V2PCRel, f)
}

// FunctionName names a function of the section's report: the demangled
// name of the symbol at its start when the Generator names them
// (Resources.Names), else "function at ADDRESS".
func (s *Section) FunctionName(f *cfi.FDE) string {
	if name, ok := s.names.Lookup(f.Section, f.Start); ok {
		return name
	}
	return fmt.Sprintf("function at %#x", f.Start)
}

// skipped returns the functions left without an SFrame FDE, with the
// reason (not the signal frames kept without FREs).
func (s *Section) skipped() []lower.Skip {
	var out []lower.Skip
	for _, k := range s.result.Skipped {
		if !k.Emitted {
			out = append(out, k)
		}
	}
	return out
}

// ErrNoCFI is the error for a file without call-frame information: nothing
// to generate from. It is cfi.ErrNoCFI; the errors that say so wrap it
// (test with errors.Is).
var ErrNoCFI = cfi.ErrNoCFI

// ErrNoFunctions is returned when no function of the file has an SFrame
// representation: there is no section to write (Section.Omitted says why
// for each).
var ErrNoFunctions = errors.New("no function has an SFrame representation")

// ErrShareBigEndian is the error of ShareAlways for a big-endian file.
var ErrShareBigEndian = errors.New("the file is big-endian")

// sharingFor says whether a section generated with opt for target shares
// its FRE blocks and, when it does not, why (for reports); an error for
// ShareAlways where sharing is refused.
func sharingFor(target lower.Target, opt Options) (share bool, why string, err error) {
	switch {
	case opt.Share == ShareNever:
		return false, "asked for one block per function", nil
	case opt.Share == ShareAlways && opt.GasCompat:
		return false, "", errGasCompatShare
	case opt.Share == ShareAlways && target.BigEndian:
		return false, "", fmt.Errorf("%w (%s), and GNU libsframe on a little-endian host (cross ld, objdump) cannot read FRE data shared in a big-endian section; generate it without sharing", ErrShareBigEndian, target)
	case opt.GasCompat:
		return false, "GNU's bytes asked for (GNU never shares)", nil
	case target.BigEndian:
		return false, "big-endian file (GNU libsframe on a little-endian host cannot read shared blocks in it)", nil
	case target.Relocatable && opt.Share == ShareDefault:
		return false, "relocatable object (GNU ld lays its output out for the shared blocks' size and writes them unshared, over what follows)", nil
	}
	return true, "", nil
}

// StrictError is returned with Options.Strict when functions or CFI
// entries could not be represented.
type StrictError struct {
	Skipped     []lower.Skip
	EntryErrors []*cfi.EntryError
}

// Error says how many functions and entries were left out, and names the
// first of them.
func (e *StrictError) Error() string {
	msg := e.Summary()
	switch {
	case len(e.Skipped) > 0:
		msg += "; the first: " + e.Skipped[0].Error()
	case len(e.EntryErrors) > 0:
		msg += "; the first: " + e.EntryErrors[0].Error()
	}
	return msg
}

// Summary says how many functions and entries were left out: "2 functions
// and 1 CFI entry could not be represented".
func (e *StrictError) Summary() string {
	f, c := "functions", "CFI entries"
	if len(e.Skipped) == 1 {
		f = "function"
	}
	if len(e.EntryErrors) == 1 {
		c = "CFI entry"
	}
	return fmt.Sprintf("%d %s and %d %s could not be represented", len(e.Skipped), f, len(e.EntryErrors), c)
}
