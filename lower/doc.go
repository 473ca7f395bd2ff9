// Package lower turns the DWARF call-frame information of one function into
// the SFrame FDE and FREs that GNU as --gsframe would emit for it, for the
// AMD64, AArch64 and s390x ABIs, or says why the function cannot be
// represented, with the text gas prints after "no SFrame FDE emitted; ".
//
// The translation works on the decoded instruction stream (the CIE's initial
// instructions followed by the FDE's), not on the executed row table: gas
// translates its own list of CFI operations one by one, and the FRE
// boundaries, duplicate FREs and offsets it produces depend on that op
// sequence, not only on the resulting rows. See docs/lower.md for the
// algorithm and the gas quirks it keeps.
//
// Lower handles a whole .eh_frame; PLT builds the FDEs GNU ld synthesizes for
// the procedure linkage table.
package lower
