// Package emit is the SFrame format itself: the in-memory form of an SFrame
// section and its encoding to and decoding from bytes, in either byte order.
//
// Start from [Reader] to read a section as a stack walker does
// ([NewReader], [ReaderFromELF]; [Reader.Lookup] says, for a PC, where the
// CFA, the return address and the frame pointer are), or from [Section] to
// build one ([Section.Encode]; [Decode] and [Dump] go the other way). The
// examples show both.
//
// The layout follows the SFrame version 3 specification and the way GNU as
// and ld write it: header, FDE index, then for each function a 5-byte
// attribute record directly followed by its FREs. Header.Version 2 selects
// the older layout (20-byte FDEs, no attribute records) for the readers
// deployed before binutils 2.46; SetVersion converts a section.
//
// A Section holds its functions in one of two forms:
//
//   - Plain: FDEs, each with its FREs (raw info bytes and sign-extended data
//     words, so that Decode then Encode gives any input back). Decode makes
//     this form.
//   - Packed, for producers of big sections: each function's attribute
//     record and FREs are encoded into Section.Packed as soon as the
//     function is made (AppendPacked; BeginPacked and PackedFDE.Add one FRE
//     at a time; MinWriter, which picks the smallest data-word size, for
//     lower's fast path; AppendPackedCopy for a function whose FREs repeat
//     an earlier one's), and the function itself is kept as a 16-byte
//     IndexEntry in Section.Index.
//
// Readers of a section in memory do not depend on its form: Section.FDE
// gives function i with its FREs from either (a packed function's FREs
// decoded as Decode decodes them from the encoded section), NumFDEs and
// NumFREs count either, PackedFunc gives a packed function without its
// FREs. Dump,
// DumpJSON, ReaderFor and SetVersion go through it, so a packed section and
// the same section decoded from its bytes print, answer and convert the
// same.
//
// Encode returns a section's bytes in one buffer, Size its length without
// encoding it. EncodeParts returns the same bytes in pieces, a packed
// section's FRE data not copied; with a Placement it writes a packed
// section's index in address order for its final address (start fields
// set, FDE_SORTED), from an order the caller computed, without moving the
// functions: the order is checked as the index is written (ErrNotSorted),
// and the index of a big section is written in two halves at once. FuncStart,
// SetFuncStart and SortByStart convert and order start fields. ShareFREs
// stores each distinct block of FRE data once, the functions with the same
// block pointing at it.
package emit
