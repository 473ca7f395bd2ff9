// Package lower turns the DWARF call-frame information of one function into
// SFrame FDE and FREs for the AMD64, AArch64 and s390x ABIs, or says why the
// function cannot be represented.
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
// Lower and LowerWith handle a whole .eh_frame; LowerFile a whole ELF file
// as GNU ld lays it out, and LowerScan the same from a section it reads as
// it lowers (cfi.Scanner); PLT and PLTWith build the FDEs GNU ld
// synthesizes for the procedure linkage table.
package lower
