// Package cfi reads DWARF call-frame information (the .eh_frame and
// .debug_frame sections of an ELF file), decodes its call-frame instructions
// and executes them into row tables.
//
// The work is split in three streaming stages, after gimli's design:
//
//   - Read parses the section into CIEs and FDEs (Frames), decoding every
//     DW_EH_PE pointer encoding and augmentation, both DWARF formats (32- and
//     64-bit lengths), CIE versions 1, 3 and 4, both byte orders, relocatable
//     objects (the FDE start comes from the .rela.eh_frame relocation) and
//     compressed sections. A broken entry is recorded in Frames.Errors with
//     its section offset; the rest of the section is still read. Open (or
//     OpenMapped, on a file mapped in memory) reads the section without
//     parsing it, for Scanners that read one part's FDEs one at a time
//     (Frames.Cut and CutWeighted cut the section into parts at entry
//     boundaries, walking only the entries' headers; CutByIndex, where
//     OpenMapped's file lists the FDEs in .eh_frame_hdr, reads that table
//     instead, the cuts then proven by the Scanners, Scanner.Offset):
//     together the parts give exactly Read's FDEs and errors, without
//     holding them all, and the Scanners of one Frames may run at once.
//   - InstructionReader decodes call-frame instructions one at a time (Next),
//     or the one at a given offset (DecodeAt), into an Instruction: the opcode
//     and its operands with the CIE's alignment factors applied. It is the
//     project's one decoder of DW_CFA instructions; ULEB128 and SLEB128 are its
//     one LEB128 decoder, which emit/verify's DWARF expressions use too. Both
//     LEB128 functions are small enough to be inlined into a caller's loop.
//   - RowIterator executes a CIE's initial instructions then an FDE's
//     instructions and yields one Row at a time, reusing its storage so that a
//     whole section is walked without an allocation per row. Its fast path
//     (fast.go) executes the most common instructions in place, their operands
//     decoded by ULEB128, and leaves the rest to the decoder: about three times
//     the speed (BenchmarkRowsOnly); TestFastPathAgrees and the fuzz targets
//     check that it gives the same rows.
//
// AppendRowsText and AppendRowsJSON (rowdump.go) print an FDE's row table
// as "sframe-gen rows" does, as emit.Dump prints an SFrame section;
// WriteRows prints every FDE's, with the entry errors in section order.
//
// A file without call-frame information gets an error that is ErrNoCFI,
// the module's one sentinel for that condition.
package cfi
