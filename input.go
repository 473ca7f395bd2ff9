package sframegen

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/lower"
)

// input is one ELF file (or archive member) being generated for: its
// bytes, as debug/elf reads it, and its ABI.
type input struct {
	r      io.ReaderAt
	size   int64
	ef     *elf.File
	target lower.Target
}

// openInput reads the ELF file r (size bytes), its headers' memory
// charged to charge, and its ABI, which must be
// Options.Arch's. A file for an architecture without SFrame is an
// *UnsupportedError; so is an ELF type other than a relocatable object,
// an executable or a shared object (a core file), and why the
// architecture has no SFrame is the error when that is known.
func (g *Generator) openInput(r io.ReaderAt, size int64, charge func(Cost) error) (*input, error) {
	ef, err := readELF(r, size, charge)
	if err != nil {
		return nil, err
	}
	in, err := g.inputOf(r, size, ef)
	var unsupported *UnsupportedError
	if errors.As(err, &unsupported) && unsupported.Err != nil {
		return nil, unsupported.Err
	}
	return in, err
}

// inputOf is openInput for a file already read as ef.
func (g *Generator) inputOf(r io.ReaderAt, size int64, ef *elf.File) (*input, error) {
	target, err := lower.TargetForELF(ef)
	if err != nil && g.want != nil {
		return nil, &ArchError{File: fmt.Sprintf("%v %v", ef.Class, ef.Machine), Want: g.opt.Arch}
	}
	if err := Supported(ef); err != nil {
		return nil, err
	}
	if err := g.checkArch(target); err != nil {
		return nil, err
	}
	return &input{r: r, size: size, ef: ef, target: target}, nil
}

// Supported returns nil for an ELF file SFrame can describe, and an
// *UnsupportedError for one Process leaves alone: for an architecture
// without SFrame, or of a type that holds no code to unwind.
func Supported(f *elf.File) error {
	if _, err := lower.TargetForELF(f); err != nil {
		return &UnsupportedError{fmt.Sprintf("unsupported architecture (%v %v)", f.Class, f.Machine), err}
	}
	switch f.Type {
	case elf.ET_REL, elf.ET_EXEC, elf.ET_DYN:
		return nil
	}
	return &UnsupportedError{Reason: fmt.Sprintf("ELF type %v", f.Type)}
}

// ArchError is the error for a file that is not for Options.Arch.
type ArchError struct {
	File string // the file's architecture
	Want string // Options.Arch's
}

// Error says what the file is for.
func (e *ArchError) Error() string { return fmt.Sprintf("file is for %s, not %s", e.File, e.Want) }

// UnsupportedError is the error for a file SFrame has nothing to say
// about: an ELF file for an architecture without SFrame, or of a type
// that holds no code to unwind. Process skips such a file found in a
// tree, and fails one the user names (with Err, when there is one).
type UnsupportedError struct {
	Reason string
	Err    error // why the architecture has no SFrame, if that is the reason
}

// Error is the reason.
func (e *UnsupportedError) Error() string { return e.Reason }

// Generates reports whether Process gives the ELF file f a .sframe
// section: f is for an ABI with SFrame and has CFI.
func Generates(f *elf.File) bool {
	if _, err := lower.TargetForELF(f); err != nil {
		return false
	}
	size, _ := cfiSize(f)
	return size > 0
}

// readELF is elfread.ReadELF with each allocation charged to charge, as
// the Meter of a read command charges its budget.
func readELF(r io.ReaderAt, size int64, charge func(Cost) error) (*elf.File, error) {
	return chargeTo(charge).ReadELF(r, size)
}

// chargeTo returns the elfread.Meter that charges charge.
func chargeTo(charge func(Cost) error) *elfread.Meter {
	return elfread.ChargeTo(func(c elfread.Cost) error { return charge(Cost{Bytes: c.Bytes, What: c.What}) })
}
