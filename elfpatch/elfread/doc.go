// Package elfread reads untrusted ELF files and static archives within a
// memory budget: every size their headers give is checked against the
// file and charged before debug/elf allocates it, so that a crafted count
// (millions of sections in a small sparse file) is refused, not allocated.
//
// [ReadELF] reads an ELF file's headers with debug/elf, a file cut short
// being a [*CutError] naming the part past the end, one that is not ELF
// [ErrNotELF]. [Objects] calls a function with the file, or with each ELF
// member of a static archive (Meter.ObjectsAt: of the file at a path;
// Object.Name names a member ARCHIVE(MEMBER)). A [MemoryBudget]
// ([NewMemoryBudget]) shares a number of bytes between the files read at
// once; a [Meter] ([NewMeter]) charges one reader's allocations to it
// (Meter.ReadELF, Meter.Objects, ChargeSymbols, ChargeNames, ChargeSFrame,
// ChargeCFI, ChargeSection; ChargeNotes for a core's notes, ChargeVerify
// for a check of .sframe against the CFI) and gives them back at once
// (Release); a charge over the whole budget is an [*OverBudgetError].
// [ChargeTo] makes a Meter for a caller that accounts for memory its own
// way (package sframegen's Generator).
//
// Files: read.go (ReadELF, Kind, Objects), budget.go (MemoryBudget, Meter,
// Cost, FormatSize), limit.go (a budget's limit: ParseSize,
// DefaultMemoryLimit; memory_linux.go the machine's memory), elfcost.go
// (what debug/elf allocates for headers, symbol tables and .sframe,
// charged before it does), file.go (what the reading commands read of a
// path: ObjectsAt, Object.Name, ChargeNotes, ChargeVerify), names.go
// (DisplayName, JSONWriter: names read from files printed so that they
// cannot act on a terminal).
package elfread
