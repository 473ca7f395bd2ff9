package sframegen

import (
	"fmt"
	"strconv"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// AppendMessages appends to b the messages of what Process found and did
// with file (written to dst), one line each as the sframe-gen command
// prints them: the CFI entries that could not be read; with verbose or
// strict the functions left without an SFrame FDE, with the reason; the
// warnings; with verbose what was written, or why nothing was. err is
// Process's: after an error, only what was found is said. Names are
// printed as elfread.DisplayName prints them.
func (o *Outcome) AppendMessages(b []byte, file, dst string, verbose, strict bool, err error) []byte {
	name := elfread.DisplayName
	for _, rep := range o.Reports {
		label := name(file)
		if rep.Member != "" {
			label = fmt.Sprintf("%s(%s)", name(file), name(rep.Member))
		}
		sec := rep.Section
		if sec == nil {
			if verbose {
				b = fmt.Appendf(b, "sframe-gen: %s: no call-frame information; nothing to generate\n", label)
			}
			continue
		}
		for _, e := range sec.EntryErrors {
			b = fmt.Appendf(b, "sframe-gen: %s: %v\n", label, e)
		}
		for _, s := range sec.Omitted() {
			switch {
			case s.Emitted && verbose:
				b = fmt.Appendf(b, "sframe-gen: %s: %s: SFrame FDE without FREs (signal frame): %s\n", label, name(sec.FunctionName(s.FDE)), s.Reason)
			case !s.Emitted && (verbose || strict):
				b = fmt.Appendf(b, "sframe-gen: %s: %s: no SFrame FDE: %s\n", label, name(sec.FunctionName(s.FDE)), s.Reason)
			}
		}
	}
	if err != nil {
		return b
	}
	for _, warning := range o.Warnings {
		b = fmt.Appendf(b, "sframe-gen: %s: %s\n", name(file), warning)
	}
	if !verbose {
		return b
	}
	const upToDate = "sframe-gen: %s: up to date: its SFrame is already what would be written\n"
	for _, rep := range o.Reports {
		label, written := name(file), name(dst)
		if rep.Member != "" {
			label = fmt.Sprintf("%s(%s)", label, name(rep.Member))
			written = label
		}
		switch {
		case rep.Section == nil:
		case rep.UpToDate:
			b = fmt.Appendf(b, upToDate, label)
		case o.Status != Patched:
		case rep.Section.Target.Relocatable:
			b = rep.Section.appendWritten(b, written, "with .rela.sframe")
		default:
			b = rep.Section.appendWritten(b, written, rep.Section.linkedWhere())
		}
	}
	if o.Kind == "archive" && o.Status == UpToDate {
		b = fmt.Appendf(b, upToDate, name(file))
	}
	return b
}

// linkedWhere says where s, of a linked file, went (appendWritten).
func (s *Section) linkedWhere() string {
	l := s.Layout
	where := fmt.Sprintf("at %#x, PT_GNU_SFRAME", l.Addr)
	if l.Replaced {
		where += "; in place of an earlier run's, patched as the file that run was given"
	}
	if l.PhdrExecCleared {
		where += "; PF_X cleared from PT_PHDR (the Linux kernel registers SFrame for every PF_X header)"
	}
	return where
}

// appendWritten appends the message of s written to dst (where in it),
// with whether FRE blocks are shared (or why not).
func (s *Section) appendWritten(b []byte, dst, where string) []byte {
	shared := fmt.Sprintf(", %s sharing an earlier one's FREs", count(s.SharedFDEs(), "FDE"))
	if !s.Shared {
		shared = ", one block of FREs per function: " + s.Unshared
	}
	return fmt.Appendf(b, "sframe-gen: %s: wrote .sframe (%s, %s, %s%s) %s\n", dst, count(s.Size(), "byte"), count(s.NumFDEs(), "FDE"), count(s.NumFREs(), "FRE"), shared, where)
}

// count is "1 noun" or "N nouns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
