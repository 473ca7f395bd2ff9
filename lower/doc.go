// Package lower turns the DWARF call-frame information of one function into
// SFrame FDE and FREs for the AMD64, AArch64 and s390x ABIs, or says why the
// function cannot be represented.
//
// Start from [TargetForELF] (the ABI of a file) and [LowerFile] (a whole
// file, with the PLT FDEs GNU ld adds), or [NewLowerer] and
// [Lowerer.Function] for one function at a time; a function left out comes
// back as a [Skip] with its reason. The examples lower one function and show
// a refusal. Most callers want the module's root package, sframegen, which
// runs cfi, lower, emit and elfpatch in one call.
//
// By default the output means exactly what the CFI means at every address:
// it is what GNU as --gsframe emits wherever gas's translation is right
// (byte for byte), corrected where it is not, and refused, with a reason,
// where SFrame cannot express the CFI. Options.GasCompat reproduces GNU as
// and ld bug for bug instead, with the text gas prints after "no SFrame FDE
// emitted; " for every refusal.
//
// The translation works on the decoded instruction stream (the CIE's initial
// instructions followed by the FDE's), not on the executed row table: gas
// translates its own list of CFI operations one by one, and the FRE
// boundaries, duplicate FREs and offsets it produces depend on that op
// sequence, not only on the resulting rows. See docs/lower.md for the
// algorithm, the gas quirks GasCompat keeps and what the default mode
// changes.
//
// Lower handles a whole .eh_frame; LowerFile a whole ELF file
// as GNU ld lays it out, and LowerScan the same from a section it reads as
// it lowers (cfi.Scanner); the FDEs GNU ld synthesizes for the
// procedure linkage table are built in plt.go, and, in the default mode,
// those of AArch64 PLT stubs, for which ld writes none, in pltaarch64.go.
//
// # Paths
//
// Every path gives the same bytes; the tests compare them with each other
// and with gas (TestShortcuts, TestScanLower, FuzzLower, FuzzScanELF).
//
//   - The translator (translate.go, translate_ops.go, escape.go) is the
//     reference: gas's translation op by op, both modes, every refusal.
//     Change how FREs are chosen here first.
//   - The fast path (fast.go; the correct mode) translates
//     a function whose CFI keeps to the common shapes straight from its
//     instruction bytes, and gives up, having written nothing, at the first
//     instruction it does not know: the function then goes through the
//     translator.
//   - The memo (memo.go): a function the fast path leaves whose CIE, FRE
//     type and instruction bytes repeat an earlier one's gets a copy of
//     that one's FREs.
//
// Each function is encoded as soon as it is lowered (emit.Section's
// FREData, appended to by emit's builder). With Options.Workers the functions are cut
// into contiguous parts lowered on that many goroutines and joined in
// order (parallel.go); LowerScan cuts the section itself (scan.go), and
// each worker sorts the starts of the parts it lowered (runs.go), which
// Result.EncodeThenPlace merges into the index's address order.
// docs/lower.md has the translation rules and gas's quirks,
// docs/performance.md what each of these is worth.
package lower
