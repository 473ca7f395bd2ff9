// Package verify checks an SFrame section against the DWARF call-frame
// information (CFI) of the same ELF file, and against the rules of the
// strictest SFrame consumers.
//
// The check is independent of the code that generates SFrame (package
// lower): it decodes the section bytes, evaluates the SFrame lookup the way
// a stack tracer does (the Linux kernel's FRE search, the data-word layouts
// of the SFrame version 3 specification, Appendix A), executes the CFI into
// row tables (package cfi), and compares the two at every byte address of
// every function the section describes. Addresses are handled as intervals:
// the union of both sides' boundaries splits each function into pieces on
// which both sides are constant, so the cost is proportional to the number
// of rows, not to the size of the code. Only CFA expressions that read the
// program counter (the PLT expression GNU ld writes) are evaluated address by
// address.
//
// What is compared, what is not, and which consumer rules are applied, is
// documented in docs/verify.md. The report's text and JSON forms
// (Finding.String, Report.Summary, Report.WriteText, Report.JSON: report.go) are those of
// "sframe-gen verify".
package verify
