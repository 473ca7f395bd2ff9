package verify

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// Kind classifies a finding.
type Kind string

// Finding kinds.
const (
	// KindFormat: the section cannot be decoded, or a field breaks the
	// SFrame format itself.
	KindFormat Kind = "format"
	// KindConsumer: a rule of a consumer (the Linux kernel's validation,
	// libsframe, GNU ld's input checks) that the section or the ELF file
	// breaks.
	KindConsumer Kind = "consumer"
	// KindMismatch: at some addresses, SFrame and the CFI give different
	// rules.
	KindMismatch Kind = "mismatch"
	// KindCoverage: SFrame describes addresses the CFI does not, or only
	// part of a function the CFI describes.
	KindCoverage Kind = "coverage"
	// KindNote: information that is not a problem (known GNU quirks,
	// broken CFI entries).
	KindNote Kind = "note"
)

// Finding is one problem or note.
type Finding struct {
	Kind Kind
	// InFunction is true when the finding concerns one function: Section
	// (ELF section index, relocatable objects only) and Func (its start
	// address, or offset in Section) say which.
	InFunction bool
	Section    int
	Func       uint64
	// Addr and End delimit the addresses concerned (End exclusive; equal
	// to Addr when the finding is about the function as a whole); Bytes
	// counts the addresses concerned within [Addr, End), which can be
	// fewer for a repeated (PCMASK) pattern.
	Addr, End uint64
	Bytes     uint64
	// FDE is the index of the SFrame FDE concerned, -1 if none.
	FDE int
	// Msg says what is wrong: "what SFrame says vs what the CFI says"
	// for mismatches.
	Msg string
}

// Function is a function the CFI describes.
type Function struct {
	Section int // ELF section index (relocatable objects), else 0
	Start   uint64
	Size    uint64
	Signal  bool
}

// Report is the result of checking one file.
type Report struct {
	ABI emit.ABI
	// Version and Flags are the section's header fields.
	Version uint8
	Flags   emit.Flags
	// Relocatable is true for an ET_REL object: function starts come from
	// .rela.sframe and are section offsets.
	Relocatable bool
	// Functions is the number of SFrame FDEs; Addresses the number of
	// byte addresses they describe (summed over FDEs).
	Functions int
	Addresses uint64
	// FREs is the number of FREs in the section.
	FREs int
	// CFIFunctions is the number of CFI FDEs (of non-zero size), CFIBytes
	// the sum of their sizes.
	CFIFunctions int
	CFIBytes     uint64
	// SignalNoFREs counts signal-frame FDEs with no FREs (GNU as keeps a
	// signal frame it cannot translate that way): nothing to compare.
	SignalNoFREs int
	// Problems are what makes the check fail; Notes are informational.
	Problems []Finding
	Notes    []Finding
	// Uncovered lists the functions the CFI describes and the section
	// does not cover at all (GNU as skips some on purpose).
	Uncovered []Function
}

// Options select what to check against.
type Options struct {
	// Source is the CFI section to compare with (default: .eh_frame when
	// present, else .debug_frame).
	Source cfi.Source
}

// programType is PT_GNU_SFRAME.
const programType elf.ProgType = 0x6474e554

// maxMaskBlocks bounds the repetitions of one PCMASK FDE that are checked
// (a hostile rep_size of 1 over a 4 GiB function would otherwise cost
// billions of intervals).
const maxMaskBlocks = 1 << 20

// maxExprAddresses bounds the addresses at which PC-dependent CFA
// expressions are evaluated one by one, per file (a PLT has a few
// thousand; 16 Mi take about a second).
const maxExprAddresses = 1 << 24

// File checks the .sframe section of f against f's CFI and against the
// consumer rules described in docs/verify.md. The error result is for a
// file that cannot be checked at all: no .sframe section (emit.FindSection;
// the error is emit.ErrNoSFrame), no call-frame information to check it
// against (none at all, a program whose .eh_frame or .debug_frame was
// stripped, or not the section opt.Source asks for: the error wraps
// cfi.ErrNoCFI and says which), unreadable section data. Everything wrong
// with the section itself is a Finding.
func File(f *elf.File, opt Options) (*Report, error) {
	sec := emit.FindSection(f)
	if sec == nil {
		return nil, emit.ErrNoSFrame
	}
	data, err := sec.Data()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("section %s (file offset %#x, size %#x) runs past the end of the file (%w)", sec.Name, sec.Offset, sec.FileSize, err)
	}
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", sec.Name, err)
	}
	c := &checker{f: f, sec: sec, data: data, rel: f.Type == elf.ET_REL, exprBudget: maxExprAddresses}
	c.r = &Report{Relocatable: c.rel}
	c.run(opt)
	if c.noCFI != nil {
		return nil, c.noCFI
	}
	return c.r, nil
}

// checker holds the state of one File call.
type checker struct {
	f    *elf.File
	sec  *elf.Section
	data []byte
	rel  bool
	r    *Report
	s    *emit.Section
	// fdes are the section's functions with their FREs (Section.Functions).
	fdes []emit.FDE
	// starts[i] is FDE i's function: section index (ET_REL) and start;
	// ok[i] false when it is unknown (no relocation).
	starts []funcKey
	ok     []bool
	// exprBudget is how many more addresses a PC-dependent CFA expression
	// may be evaluated at (one at a time); a hostile FDE could ask for 2^64.
	exprBudget uint64
	// noCFI is why the file has no CFI to compare with: File's error,
	// which wraps cfi.ErrNoCFI.
	noCFI error
	// plt is the .plt's code, for the instruction boundaries of its
	// entries (cfaAtBoundary).
	plt pltCode
}

// funcKey is a code address: the section index in a relocatable object
// (0 in linked files) and the address or offset.
type funcKey struct {
	section int
	addr    uint64
}

func (c *checker) problem(k Kind, fde int, msg string, args ...any) {
	c.r.Problems = append(c.r.Problems, c.finding(k, fde, msg, args...))
}

func (c *checker) note(fde int, msg string, args ...any) {
	c.r.Notes = append(c.r.Notes, c.finding(KindNote, fde, msg, args...))
}

func (c *checker) finding(k Kind, fde int, msg string, args ...any) Finding {
	fd := Finding{Kind: k, FDE: fde, Msg: fmt.Sprintf(msg, args...)}
	if fde >= 0 && fde < len(c.starts) && c.ok[fde] {
		fd.InFunction = true
		fd.Section = c.starts[fde].section
		fd.Func = c.starts[fde].addr
		fd.Addr, fd.End = fd.Func, fd.Func
	}
	return fd
}

func (c *checker) run(opt Options) {
	s, err := emit.Decode(c.data)
	if err != nil {
		c.problem(KindFormat, -1, "section %s cannot be decoded: %v", c.sec.Name, err)
		return
	}
	fdes, err := s.Functions()
	if err != nil {
		c.problem(KindFormat, -1, "section %s cannot be read: %v", c.sec.Name, err)
		return
	}
	c.s, c.fdes = s, fdes
	c.r.ABI, c.r.Version, c.r.Flags = s.Header.ABI, s.Header.Version, s.Header.Flags
	c.r.Functions = len(fdes)
	for i := range fdes {
		c.r.FREs += len(fdes[i].FREs)
		c.r.Addresses += uint64(fdes[i].Size)
	}
	c.functionStarts()
	c.checkHeader()
	c.checkELF()
	c.checkFDEs()

	frames, err := cfi.Read(c.f, opt.Source)
	switch {
	case errors.Is(err, cfi.ErrNoCFI):
		c.noCFI = fmt.Errorf("nothing to check the .sframe section against: %w", err)
		return
	case err != nil && opt.Source == cfi.EHFrame && c.f.Section(".eh_frame") == nil:
		c.noCFI = fmt.Errorf("nothing to check the .sframe section against: %w (%v)", cfi.ErrNoCFI, err)
		return
	case err != nil:
		c.note(-1, "reading the call-frame information: %v", err)
		frames = nil
	}
	if frames != nil {
		for _, e := range frames.Errors {
			c.note(-1, "CFI entry not compared: %v", e)
		}
	}
	c.compare(frames)
}

// order is the byte order of the section and of the ELF file.
func (c *checker) order() binary.ByteOrder {
	if bo := c.s.Header.ABI.ByteOrder(); bo != nil {
		return bo
	}
	return c.f.ByteOrder
}
