package stats

import (
	"bufio"
	"fmt"
	"io"
	"sort"
)

// WriteText writes st as "sframe-gen stats FILE" prints it
// (docs/stats.md): a heading naming the file, then a line per part. name
// is the file as the heading names it (st.File, quoted as the caller
// quotes names). The error is w's.
func (st *Stats) WriteText(w io.Writer, name string) error {
	bw := bufio.NewWriter(w)
	if st.DryRun {
		fmt.Fprintf(bw, "%s: dry run: the .sframe section generating would write (%s, version %d)\n", name, st.ABI, st.Version)
	} else {
		fmt.Fprintf(bw, "%s: .sframe section (%s, version %d)\n", name, st.ABI, st.Version)
	}
	fmt.Fprintf(bw, "  functions   %d of %d described by the CFI covered (%s), %d not covered\n",
		st.CoveredFunctions, st.CFIFunctions, percent(uint64(st.CoveredFunctions), uint64(st.CFIFunctions)), st.UncoveredFunctions)
	fmt.Fprintf(bw, "  text bytes  %d of %d covered (%s)\n", st.CoveredBytes, st.CFIBytes, percent(st.CoveredBytes, st.CFIBytes))
	fmt.Fprintf(bw, "  FDEs        %d: %d PCMASK, %d flex, %d signal, %d without FREs\n",
		st.FDEs, st.PCMaskFDEs, st.FlexFDEs, st.SignalFDEs, st.EmptyFDEs)
	c := st.FREsByWordCount
	fmt.Fprintf(bw, "  FREs        %d: start address 1/2/4 bytes %d/%d/%d; data words 1/2/4 bytes %d/%d/%d;"+
		" 0/1/2/3/4/5/6 words %d/%d/%d/%d/%d/%d/%d; mangled RA %d\n",
		st.FREs, st.FREsByAddrSize[0], st.FREsByAddrSize[1], st.FREsByAddrSize[2],
		st.FREsByWordSize[0], st.FREsByWordSize[1], st.FREsByWordSize[2],
		c[0], c[1], c[2], c[3], c[4], c[5], c[6], st.MangledRA)
	eh := st.EHFrameBytes + st.EHFrameHdrBytes
	fmt.Fprintf(bw, "  size        %d bytes; .eh_frame %d + .eh_frame_hdr %d = %d (.sframe is %s of that)\n",
		st.SectionBytes, st.EHFrameBytes, st.EHFrameHdrBytes, eh, percent(uint64(st.SectionBytes), eh))
	b := &st.Breakdown
	fmt.Fprintf(bw, "  bytes       header %d, FDE index %d, FDE attributes %d, FRE start addresses %d, FRE info %d, data words %d, other %d\n",
		b.Header, b.FDEIndex, b.FDEAttributes, b.FREStartAddresses, b.FREInfo, b.DataWords, b.Other)
	fmt.Fprintf(bw, "  sharing     %d FDEs repeat an earlier FDE's FRE data (%d bytes): %d bytes with one block per function,"+
		" %d with each block once (%s of .eh_frame + .eh_frame_hdr); %d FDEs share in this section\n",
		st.RepeatedFDEs, st.RepeatedBytes, st.UnsharedBytes, st.SharedBytes, percent(uint64(st.SharedBytes), eh), st.SharedFDEs)
	switch {
	case st.Shared:
		fmt.Fprintf(bw, "  written     with shared FRE blocks\n")
	case st.Unshared != "":
		fmt.Fprintf(bw, "  written     one block of FREs per function: %s\n", st.Unshared)
	default:
		fmt.Fprintf(bw, "  written     one block of FREs per function\n")
	}
	if st.DryRun {
		fmt.Fprintf(bw, "  skipped     %d functions, %d bytes\n", st.UncoveredFunctions, st.UncoveredBytes)
		for _, s := range st.Skipped {
			fmt.Fprintf(bw, "    %6d  %s (%d bytes)\n", s.Functions, s.Reason, s.Bytes)
		}
		fmt.Fprintf(bw, "  version 2   would leave out %d more functions (--sframe-version 2 covers %d)\n",
			st.V2Lost, st.CoveredFunctions-st.V2Lost)
		for _, s := range st.V2LostReasons {
			fmt.Fprintf(bw, "    %6d  %s (%d bytes)\n", s.Functions, s.Reason, s.Bytes)
		}
	}
	return bw.Flush()
}

// WriteLine writes st on one line, as "sframe-gen stats PATH..." prints
// each file of a tree; name is the file as the line names it. The error
// is w's.
func (st *Stats) WriteLine(w io.Writer, name string) error {
	eh := st.EHFrameBytes + st.EHFrameHdrBytes
	what := ".sframe"
	if st.DryRun {
		what = "dry run"
	}
	_, err := fmt.Fprintf(w, "%s: %s %d bytes, %s of .eh_frame + .eh_frame_hdr %d; functions %d of %d covered\n",
		name, what, st.SectionBytes, percent(uint64(st.SectionBytes), eh), eh, st.CoveredFunctions, st.CFIFunctions)
	return err
}

// WriteText writes t as "sframe-gen stats PATH..." ends: the files
// counted, then the sizes and coverage of them all, of each kind of file
// and of each ABI. The error is w's.
func (t *Total) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "total: %s described, %d without CFI, %d skipped, %d failed; %d bytes of ELF files and archives\n",
		files(t.Counts.Files), t.FilesWithoutCFI, t.FilesSkipped, t.FilesFailed, t.InstalledBytes)
	t.Counts.writeText(bw, t.InstalledBytes)
	for _, by := range []map[string]*Counts{t.ByKind, t.ByABI} {
		keys := make([]string, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c := by[k]
			fmt.Fprintf(bw, "%s: %s, %d bytes\n", k, files(c.Files), c.FileBytes)
			c.writeText(bw, c.FileBytes)
		}
	}
	return bw.Flush()
}

// writeText writes the sizes and coverage of c; installed is the size of
// the files they are part of.
func (c *Counts) writeText(w io.Writer, installed int64) {
	eh := c.EHFrameBytes + c.EHFrameHdrBytes
	fmt.Fprintf(w, "  .sframe     %d bytes: %s of .eh_frame %d + .eh_frame_hdr %d = %d, %s of the files\n",
		c.SectionBytes, ratio(uint64(c.SectionBytes), eh), c.EHFrameBytes, c.EHFrameHdrBytes, eh,
		percent(uint64(c.SectionBytes), uint64(installed)))
	fmt.Fprintf(w, "  unshared    %d bytes with one block of FREs per function (GNU's form): %s of .eh_frame + .eh_frame_hdr, %s of the files\n",
		c.UnsharedBytes, ratio(uint64(c.UnsharedBytes), eh), percent(uint64(c.UnsharedBytes), uint64(installed)))
	b := &c.Breakdown
	fmt.Fprintf(w, "  bytes       header %d, FDE index %d, FDE attributes %d, FRE start addresses %d, FRE info %d, data words %d, other %d; sharing saved %d, narrowing saved %d\n",
		b.Header, b.FDEIndex, b.FDEAttributes, b.FREStartAddresses, b.FREInfo, b.DataWords, b.Other, b.SharingSaved, b.NarrowingSaved)
	fmt.Fprintf(w, "  functions   %d of %d described by the CFI covered (%s); %d FDEs, %d FREs\n",
		c.CoveredFunctions, c.CFIFunctions, percent(uint64(c.CoveredFunctions), uint64(c.CFIFunctions)), c.FDEs, c.FREs)
}

// files is "1 file" or "N files".
func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// percent prints a/b as a percentage with one decimal, or "-".
func percent(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// ratio prints a/b with three decimals, or "-".
func ratio(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}
