package cfi

import (
	"encoding/binary"
	"fmt"
)

// Source selects the CFI section to read.
type Source int

// CFI sources.
const (
	// Auto reads .eh_frame when the file has one, else .debug_frame.
	Auto Source = iota
	// EHFrame reads .eh_frame.
	EHFrame
	// DebugFrame reads .debug_frame (or .zdebug_frame).
	DebugFrame
)

// String returns the section name of s (".eh_frame", ".debug_frame") or
// "auto".
func (s Source) String() string { return enumName(sourceNames[:], int(s), "Source(%d)") }

var sourceNames = [...]string{Auto: "auto", EHFrame: ".eh_frame", DebugFrame: ".debug_frame"}

// CIE is a Common Information Entry.
type CIE struct {
	Offset       uint64 // section offset of the entry (its length field)
	Version      uint8
	Augmentation string
	AddressSize  uint8 // from a version 4 CIE, else the ELF class's
	SegmentSize  uint8 // segment_selector_size of a version 4 CIE
	CodeAlign    uint64
	DataAlign    int64
	RAColumn     uint64 // the return address register
	FDEEncoding  uint8  // DW_EH_PE_* of FDE addresses (augmentation R), absptr if none
	LSDAEncoding uint8  // DW_EH_PE_* of the LSDA pointer (augmentation L), omit if none
	Personality  uint64 // the decoded personality routine pointer (augmentation P), if any
	Signal       bool   // augmentation S: a signal frame
	BKey         bool   // augmentation B: AArch64 pointer authentication with the B key
	MTETagged    bool   // augmentation G: AArch64 MTE tagged stack frame
	Initial      []byte // the initial instructions (aliases the section data)

	// Format64 is true for an entry with a 64-bit DWARF length.
	Format64 bool
	// InitialOffset is the section offset of Initial[0].
	InitialOffset uint64

	hasAugData bool // the augmentation starts with 'z': FDEs have augmentation data
}

// FDE is a Frame Description Entry.
type FDE struct {
	Offset uint64 // section offset of the entry (its length field)
	CIE    *CIE
	// Start is the first PC: an absolute address for linked files; for
	// relocatable objects the offset in the ELF section Section.
	Start uint64
	// Size is the length of the address range the FDE covers.
	Size uint64
	// Section is, for relocatable objects, the ELF section index of the
	// described code, from the relocation of the initial location; 0
	// otherwise.
	Section      int
	Instructions []byte // call-frame instructions (aliases the section data)
	LSDA         uint64 // the decoded LSDA pointer (augmentation L), 0 if none

	// Format64 is true for an entry with a 64-bit DWARF length.
	Format64 bool
	// InstructionsOffset is the section offset of Instructions[0].
	InstructionsOffset uint64
}

// End returns the address after the last PC the FDE covers.
func (f *FDE) End() uint64 { return f.Start + f.Size }

// Frames is the result of reading one CFI section.
type Frames struct {
	Source  Source // EHFrame or DebugFrame
	Name    string // the section name read (".eh_frame", ".debug_frame", ".zdebug_frame")
	Order   binary.ByteOrder
	Address uint64 // the section's address (sh_addr)
	FDEs    []*FDE // in section order
	CIEs    []*CIE // in section order
	// Errors are the per-entry problems, in section order. An entry with an
	// error is left out of FDEs and CIEs.
	Errors []*EntryError
	// Relocatable is true for ET_REL input.
	Relocatable bool
	// Data is the section's contents as read (inflated if compressed):
	// the instructions of the CIEs and FDEs alias it, Data[f.InstructionsOffset:]
	// starting with f.Instructions.
	Data []byte

	ptr   PointerContext // the section-wide part of pointer decoding
	big   bool           // Order is big-endian
	index fdeIndex       // OpenMapped's .eh_frame_hdr table, for CutByIndex
}

// EntryError is a problem with one CIE or FDE.
type EntryError struct {
	Section string // ".eh_frame" or ".debug_frame"
	Offset  uint64 // section offset of the entry
	Err     error
}

// Error returns "<section>: offset 0x..: <what is wrong>".
func (e *EntryError) Error() string {
	return fmt.Sprintf("%s: offset %#x: %v", e.Section, e.Offset, e.Err)
}

// Unwrap returns the underlying error.
func (e *EntryError) Unwrap() error { return e.Err }
