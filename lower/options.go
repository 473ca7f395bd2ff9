package lower

// Options select how lower translates.
//
// The default (the zero value) is the correct mode: the SFrame means what
// the CFI means at every address. It keeps every GNU as behaviour that does
// not change the meaning (FRE boundaries, the trailing duplicate FRE,
// data-word sizes, the flex-or-default choice, escape shapes, refusals and
// their texts), so that for every function gas translates right the bytes
// are gas's. Where gas's translation would say something else than the CFI
// (docs/lower.md, "Correct mode"), it emits the FREs that do mean the CFI,
// or refuses the function with a reason of its own when SFrame cannot
// express them.
type Options struct {
	// GasCompat reproduces GNU as --gsframe and GNU ld bug for bug: the
	// output is byte-identical to theirs, including the translations that
	// do not mean what the CFI means (DW_CFA_restore to the first
	// committed FRE, one remembered state, ld's .plt.got FRE, zero-size
	// FDEs kept in linked files, ...).
	GasCompat bool
	// Workers, when more than 1, lowers the functions on that many
	// goroutines: they are cut into contiguous parts (4 per worker, or
	// LowerScan's of a big section about 256 KiB of CFI each), each
	// lowered with a Lowerer of its own by the first worker free, and
	// joined in order: the result is the one of the serial path. Worth it
	// from a few thousand functions.
	Workers int
	// MappedCFI says, to LowerScan, that the CFI section's bytes are a
	// mapping of the file (cfi.OpenMapped), which faults if the file is
	// cut while it is read: such a fault (as any panic while lowering)
	// becomes an error instead of a crash, and the result keeps no
	// reference into the bytes (the
	// skipped functions' FDEs lose their instructions, their CIEs the
	// initial ones), so that the mapping may be removed once LowerScan
	// returns.
	MappedCFI bool
	// Hold, when not nil, keeps one of the Workers from lowering until it
	// is closed: for a caller whose other work has a CPU until then
	// (generate copies the file meanwhile), so that the two do not share
	// one CPU while the other idles later. (The worker starts anyway once
	// every part has been taken.)
	Hold <-chan struct{}
	// Version is the SFrame version to write: 0 or 3 (version 3), or 2
	// for the readers deployed before binutils 2.46 (layout V2Layout):
	// the functions version 2 cannot express (V2Refusal) are left out,
	// with the reason, in Result.Skipped. Version 2 sections are made
	// by Lower and LowerFile, not LowerScan.
	Version uint8
	// V2Layout is the version 2 flavour written with Version 2.
	V2Layout V2Layout

	// ShareFREs writes each distinct block of FRE data (a function's
	// attribute record and FREs) once: every function whose block
	// repeats an earlier function's points at that copy
	// (emit.Section.ShareFREs, after the PLT FDEs are appended). The
	// section is smaller (libLLVM.so: 0.67 of the size) and means the
	// same; docs/sharing.md lists the readers checked. GNU libsframe on
	// a host of the other byte order cannot read shared blocks (it
	// converts the section in place, function by function): the CLI
	// refuses it for big-endian files.
	ShareFREs bool
	// NarrowFREs writes each function's FRE start addresses in the
	// narrowest FRE type its FREs allow (emit.NarrowestFREType of its
	// last FRE's start) instead of the one its size asks for, as gas and
	// ld choose (emit.FRETypeFor): a function of 300 bytes whose FREs all
	// start below 0x100 gets one byte per start address, not two. The
	// FREs mean the same to every reader (the FRE type is the width of
	// the start addresses); only the bytes differ from GNU's. Version 3
	// only (a version 2 section ignores it); the PLT FDEs keep ld's type.
	NarrowFREs bool
	// MergeFDEs writes a run of adjacent functions of a linked file whose
	// FREs are the same single row as one FDE (MergeAdjacent), also
	// across the alignment padding between them (MergePadding). The
	// SFrame still means what the CFI means at every address of the
	// functions, but a reader that takes FDEs for functions sees fewer
	// of them (docs/cost.md): an option, not the default.
	// Result.Merged counts the functions merged into the one before.
	MergeFDEs MergeFDEs

	// noMemo makes the lowering translate every function, even one
	// whose CFI repeats an earlier one's (tests compare both).
	noMemo bool
	// noFast sends every function through the translator, none through
	// the fast path (tests compare both).
	noFast bool
	// afterCut, if not nil, is called by LowerScan once it has cut the
	// section, before the parts are read (a test cuts the file there).
	afterCut func()
	// recut, if not nil, is called by LowerScan when it gives up the
	// cut of the section's .eh_frame_hdr for the walk of its entries (a
	// test's).
	recut func()
}

// narrow reports whether the FRE types are narrowed (NarrowFREs, version 3).
func (o *Options) narrow() bool { return o.NarrowFREs && o.Version != 2 }
