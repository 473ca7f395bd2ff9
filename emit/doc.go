// Package emit is the SFrame format itself: the in-memory form of an SFrame
// section and its encoding to and decoding from bytes, in either byte order.
//
// Start from [Reader] to read a section as a stack walker does
// ([NewReader], [ReaderFromELF]; [Reader.Lookup] says, for a PC, where the
// CFA, the return address and the frame pointer are), or from [Section] to
// build one ([Section.Encode]; [Decode] and [Dump] go the other way). The
// examples show both. [FindSection] is the one way every package finds the
// section in an ELF file; a file without one gets an error that is
// [ErrNoSFrame].
//
// The layout follows the SFrame version 3 specification and the way GNU as
// and ld write it: header, FDE index, then for each function a 5-byte
// attribute record directly followed by its FREs. Header.Version 2 selects
// the older layout (20-byte FDEs, no attribute records) for the readers
// deployed before binutils 2.46: Encode moves each record's fields into
// the function's FDE.
//
// A Section has one in-memory form, the one every producer and reader
// uses: the FDE index (Section.Index, 16 bytes a function) and the FRE
// sub-section already encoded in the version 3 layout (Section.FREData:
// each function's 5-byte attribute record followed by its FREs, a few
// bytes per FRE). Sections are made by the builder, whose checks and FRE
// writer are the only ones: AppendFDE (or NewSection) appends a function
// given as an FDE with its FREs; FDEWriter (BeginFDE) appends one FRE at a
// time; MinWriter, for lower's fast path, takes each FRE's values and
// writes them in the smallest data-word size; AppendCopy appends a copy
// of an earlier function's record. Decode makes the same form from bytes
// of either version (a version 2 section's FREs become records).
//
// Readers go through accessors: NumFDEs, NumFREs, Func (a function
// without its FREs), FDE (a function with its FREs decoded, with
// Decode's checks) and Functions. Dump, DumpJSON (DumpELF: of an ELF
// file), ReaderFor, verify and the stack walker read a section that way,
// so a section in memory and the section decoded from its bytes print,
// answer and walk the same.
//
// Encode returns a section's bytes in one buffer, Size its length without
// encoding it. EncodeParts returns the same bytes in pieces, FREData not
// copied; with a Placement it writes a version 3 index in address order for its final address (start fields
// set, FDE_SORTED), from an order the caller computed, without moving the
// functions: the order is checked as the index is written (ErrNotSorted),
// and the index of a big section is written in two halves at once. FuncStart
// and SetFuncStart convert start fields (lower.Result.Place orders them). ShareFREs
// stores each distinct block of FRE data once, the functions with the same
// block pointing at it.
package emit
