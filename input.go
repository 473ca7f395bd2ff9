package sframegen

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
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

// Kind names the kind of an ELF file, as reports do: "object",
// "executable", "pie-executable", "shared-library", or the ELF type.
func Kind(f *elf.File) string {
	switch f.Type {
	case elf.ET_REL:
		return "object"
	case elf.ET_EXEC:
		return "executable"
	case elf.ET_DYN:
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return "pie-executable"
			}
		}
		return "shared-library"
	}
	return f.Type.String()
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

// CutError is the error of an ELF file that ends before a part its header
// promises.
type CutError struct {
	msg string
	err error // io.EOF or io.ErrUnexpectedEOF from debug/elf
}

// Error names the part that runs past the end of the file.
func (e *CutError) Error() string { return e.msg }

// Unwrap returns debug/elf's io.EOF or io.ErrUnexpectedEOF.
func (e *CutError) Unwrap() error { return e.err }

// ErrNotELF is returned by ReadELF for a file that does not start with
// the ELF magic (the one error of package target, whose Meter this is).
var ErrNotELF = target.ErrNotELF

// ReadELF reads the ELF headers of r (size bytes) with debug/elf: a file
// that does not start with the ELF magic is ErrNotELF, and debug/elf's
// bare "EOF" for a file cut short is replaced by a *CutError naming the
// part that runs past the end. The header tables and the section name
// table are checked against the file before debug/elf reads them
// (Meter.ReadELF also charges their memory).
func ReadELF(r io.ReaderAt, size int64) (*elf.File, error) { return readELF(r, size, nil) }

// ReadELF is [ReadELF] with the memory debug/elf takes for the headers of
// r (the program and section headers, the section names) charged to m
// before debug/elf allocates it: a file that would need more than the
// budget is an *OverBudgetError.
func (m *Meter) ReadELF(r io.ReaderAt, size int64) (*elf.File, error) {
	return readELF(r, size, m.Charge)
}

// readELF is ReadELF, charging each allocation to charge (nil: none).
func readELF(r io.ReaderAt, size int64, charge func(Cost) error) (*elf.File, error) {
	var magic [len(elf.ELFMAG)]byte
	if n, _ := r.ReadAt(magic[:], 0); n == len(magic) && string(magic[:]) != elf.ELFMAG {
		return nil, ErrNotELF
	}
	if charge == nil {
		charge = func(Cost) error { return nil }
	}
	if err := chargeHeaders(r, size, charge); err != nil {
		return nil, err
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, describeCut(r, size, err)
	}
	return f, nil
}

// describeCut turns debug/elf's io.EOF or io.ErrUnexpectedEOF for the file r
// of size bytes into a CutError naming the part that runs past the end;
// other errors are returned as they are.
func describeCut(r io.ReaderAt, size int64, err error) error {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	cut := func(format string, args ...any) error {
		return &CutError{msg: fmt.Sprintf(format, args...), err: err}
	}
	if size == 0 {
		return cut("empty file, not an ELF file")
	}
	var h [64]byte
	n, _ := r.ReadAt(h[:], 0)
	if n < 4 || string(h[:4]) != elf.ELFMAG {
		return cut("not an ELF file (%d bytes)", size)
	}
	hdrSize := 64
	if n > 4 && elf.Class(h[4]) == elf.ELFCLASS32 {
		hdrSize = 52
	}
	if n < hdrSize {
		return cut("ELF header cut off: the file has %d bytes, the header %d", size, hdrSize)
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(h[5]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	var phoff, shoff uint64
	var phent, phnum, shent, shnum uint64
	if hdrSize == 64 {
		phoff, shoff = bo.Uint64(h[0x20:]), bo.Uint64(h[0x28:])
		phent, phnum = uint64(bo.Uint16(h[0x36:])), uint64(bo.Uint16(h[0x38:]))
		shent, shnum = uint64(bo.Uint16(h[0x3a:])), uint64(bo.Uint16(h[0x3c:]))
	} else {
		phoff, shoff = uint64(bo.Uint32(h[0x1c:])), uint64(bo.Uint32(h[0x20:]))
		phent, phnum = uint64(bo.Uint16(h[0x2a:])), uint64(bo.Uint16(h[0x2c:]))
		shent, shnum = uint64(bo.Uint16(h[0x2e:])), uint64(bo.Uint16(h[0x30:]))
	}
	past := func(off, n, ent uint64) bool {
		return n > 0 && (off > uint64(size) || n*ent > uint64(size)-off)
	}
	switch {
	case past(phoff, phnum, phent):
		return cut("program header table (offset %#x, %d entries of %d bytes) runs past the end of the file (%#x bytes)", phoff, phnum, phent, size)
	case past(shoff, shnum, shent):
		return cut("section header table (offset %#x, %d entries of %d bytes) runs past the end of the file (%#x bytes)", shoff, shnum, shent, size)
	}
	return cut("file cut off at %#x bytes: a section it names runs past the end", size)
}

// Object is one ELF object of a file: the file itself, or an ELF member
// of a static archive.
type Object struct {
	// Member is the archive member's name ("" for the file itself).
	Member string
	// File is the object read; nil when Err says why it cannot be.
	File *elf.File
	Err  error
	// R holds the object's Size bytes.
	R    io.ReaderAt
	Size int64
}

// Objects calls fn with the ELF file r (size bytes), or, when r is a
// static archive, with each of its members that is an ELF file, in order
// (members of other kinds are left out, as Process leaves them). fn
// returns whether it found what it looks for in the object; Objects
// returns whether any call did. The error is reading r itself.
func Objects(r io.ReaderAt, size int64, fn func(Object) bool) (found bool, err error) {
	return (*Meter)(nil).Objects(r, size, fn)
}

// Objects is [Objects] with the memory of reading r charged to m before
// it is read: an archive's bytes (read whole), each object's headers
// (Meter.ReadELF). What fn charges to m for a member is given back when
// fn returns; for the file itself, by the caller.
func (m *Meter) Objects(r io.ReaderAt, size int64, fn func(Object) bool) (found bool, err error) {
	var magic [len(ArchiveMagic)]byte
	if n, _ := r.ReadAt(magic[:], 0); n < len(magic) || string(magic[:]) != ArchiveMagic {
		f, err := m.ReadELF(r, size)
		if err != nil {
			return false, err
		}
		return fn(Object{File: f, R: r, Size: size}), nil
	}
	if err := m.Charge(Cost{Bytes: 2 * size, What: fmt.Sprintf("an archive of %s is read whole", FormatSize(size))}); err != nil {
		return false, err
	}
	data, err := readAll(r, size)
	if err != nil {
		return false, err
	}
	members, err := elfpatch.ArchiveMembers(data)
	if err != nil {
		return false, err
	}
	for _, mem := range members {
		if len(mem.Data) < 4 || string(mem.Data[:4]) != elf.ELFMAG {
			continue
		}
		mark := m.Held()
		o := Object{Member: mem.Name, R: bytes.NewReader(mem.Data), Size: int64(len(mem.Data))}
		o.File, o.Err = m.ReadELF(o.R, o.Size)
		if fn(o) {
			found = true
		}
		m.ReleaseTo(mark)
	}
	return found, nil
}

// Generates reports whether Process gives the ELF file f a .sframe
// section: f is for an ABI with SFrame and has CFI.
func Generates(f *elf.File) bool {
	if _, err := lower.TargetForELF(f); err != nil {
		return false
	}
	size, _ := cfiSize(f)
	return size > 0
}
