package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/stats"
)

// runStats implements "sframe-gen stats [--json] [--dry-run] FILE":
// coverage and cost of the .sframe section, or, for a file without one (or
// with --dry-run), of the section generating would write; for a static
// archive, of each member generate reads.
func (c *cli) runStats(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen stats", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	help := helpFlag(fs)
	asJSON := fs.Bool("json", false, "print the statistics as one JSON object")
	dry := fs.Bool("dry-run", false, "describe what generating would write even when FILE has a .sframe section")
	source := cfiSourceFlags(fs, "read")
	gas := fs.Bool("gas-compat", false, "in a dry run: what generating with --gas-compat writes")
	share := shareFlags(fs)
	merge := mergeFlag(fs)
	sframeVer := sframeVersionFlags(fs)
	jobs := fs.IntP("jobs", "j", 0, "with several PATHs or a directory: files read at once (default: the CPUs available)")
	budget := c.memoryLimitFlag(fs, readMemoryUsage)
	setUsage(fs, c.stdout, "sframe-gen stats [--json] [--dry-run] [GENERATE-OPTIONS] FILE\n"+
		"  or:  sframe-gen stats [--json] [--dry-run] [-j N] [GENERATE-OPTIONS] PATH...",
		"Coverage and cost of FILE's .sframe section (or, without one, of the section\n"+
			"generating would write with the same options: nothing is written); of a static\n"+
			"archive, of each member, named ARCHIVE(MEMBER).\n"+
			"With several PATHs or a directory (walked as generate walks it): a line per\n"+
			"file (--json: an object per file), then the total of all of them.")
	if err := fs.Parse(args); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if *help {
		fs.Usage()
		return exitOK
	}
	if fs.NArg() == 0 {
		return c.fail("", commandUsage("stats", "expected a FILE, or PATHs"))
	}
	var o generateOptions
	var err error
	o.gas = *gas
	if o.source, err = source(); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if o.version, err = sframeVer(); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if o.share, err = share(o.gas); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if o.merge, err = merge(o.gas); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	b, err := budget()
	if err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	opts := o.library()
	if _, err := sframegen.NewGenerator(opts, sframegen.Resources{}); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if fs.NArg() > 1 || isDir(fs.Arg(0)) {
		return c.runStatsTree(fs.Args(), opts, b, *dry, *asJSON, *jobs)
	}
	return c.statsFile(fs.Arg(0), opts, b, *dry, *asJSON)
}

// meteredGenerator is the generator of a dry run with options opts: it
// charges what it reads to meter, the input's, given back with the
// input's.
func meteredGenerator(opts sframegen.Options, meter *elfread.Meter) *sframegen.Generator {
	admit := func(cost sframegen.Cost) (func(), error) {
		return func() {}, meter.Charge(elfread.Cost{Bytes: cost.Bytes, What: cost.What})
	}
	g, _ := sframegen.NewGenerator(opts, sframegen.Resources{Admit: admit}) // opts checked by runStats
	return g
}

// statsFile prints the statistics of file and returns the exit status.
func (c *cli) statsFile(file string, opts sframegen.Options, b *memoryBudget, dry, asJSON bool) int {
	status := exitOK
	err := readInputs(file, "no member has a .sframe section or call-frame information", b, func(in elfInput) bool {
		g := meteredGenerator(opts, in.meter)
		if in.member && in.err == nil && emit.FindSection(in.f) == nil && !sframegen.Generates(in.f) {
			return false // generate leaves such a member as it is
		}
		err := in.err
		if err == nil {
			err = c.writeStats(in, g, dry, asJSON)
		}
		if err != nil {
			status = c.fail(in.name, err)
		}
		return true
	})
	if err != nil {
		return c.fail(file, err)
	}
	return status
}

// writeStats prints the statistics of in.
func (c *cli) writeStats(in elfInput, g *sframegen.Generator, dry, asJSON bool) error {
	st, err := fileStats(in, g, dry)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(c.stdout)
	if asJSON {
		enc := json.NewEncoder(jsonWriter{w})
		enc.SetIndent("", "  ")
		err = enc.Encode(st)
	} else {
		writeStatsText(w, st)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// fileStats is the statistics of in (g.Stats), its charges made first, with
// the fields that name the file: its name, kind and size.
func fileStats(in elfInput, g *sframegen.Generator, dry bool) (*stats.Stats, error) {
	if !dry && emit.FindSection(in.f) != nil {
		// The section decoded and checked against the CFI.
		if err := chargeVerify(in, g.Options().Source); err != nil {
			return nil, err
		}
	}
	st, err := g.Stats(in.r, in.size, in.f, dry)
	if err != nil {
		return nil, err
	}
	st.File = in.name
	st.Kind = elfread.Kind(in.f)
	if in.member {
		st.Kind = "archive-member"
	}
	st.FileBytes = in.size
	return st, nil
}

func percent(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func writeStatsText(w io.Writer, st *stats.Stats) {
	if st.DryRun {
		fmt.Fprintf(w, "%s: dry run: the .sframe section generating would write (%s, version %d)\n", displayName(st.File), st.ABI, st.Version)
	} else {
		fmt.Fprintf(w, "%s: .sframe section (%s, version %d)\n", displayName(st.File), st.ABI, st.Version)
	}
	fmt.Fprintf(w, "  functions   %d of %d described by the CFI covered (%s), %d not covered\n",
		st.CoveredFunctions, st.CFIFunctions, percent(uint64(st.CoveredFunctions), uint64(st.CFIFunctions)), st.UncoveredFunctions)
	fmt.Fprintf(w, "  text bytes  %d of %d covered (%s)\n", st.CoveredBytes, st.CFIBytes, percent(st.CoveredBytes, st.CFIBytes))
	fmt.Fprintf(w, "  FDEs        %d: %d PCMASK, %d flex, %d signal, %d without FREs\n",
		st.FDEs, st.PCMaskFDEs, st.FlexFDEs, st.SignalFDEs, st.EmptyFDEs)
	c := st.FREsByWordCount
	fmt.Fprintf(w, "  FREs        %d: start address 1/2/4 bytes %d/%d/%d; data words 1/2/4 bytes %d/%d/%d;"+
		" 0/1/2/3/4/5/6 words %d/%d/%d/%d/%d/%d/%d; mangled RA %d\n",
		st.FREs, st.FREsByAddrSize[0], st.FREsByAddrSize[1], st.FREsByAddrSize[2],
		st.FREsByWordSize[0], st.FREsByWordSize[1], st.FREsByWordSize[2],
		c[0], c[1], c[2], c[3], c[4], c[5], c[6], st.MangledRA)
	eh := st.EHFrameBytes + st.EHFrameHdrBytes
	fmt.Fprintf(w, "  size        %d bytes; .eh_frame %d + .eh_frame_hdr %d = %d (.sframe is %s of that)\n",
		st.SectionBytes, st.EHFrameBytes, st.EHFrameHdrBytes, eh, percent(uint64(st.SectionBytes), eh))
	b := &st.Breakdown
	fmt.Fprintf(w, "  bytes       header %d, FDE index %d, FDE attributes %d, FRE start addresses %d, FRE info %d, data words %d, other %d\n",
		b.Header, b.FDEIndex, b.FDEAttributes, b.FREStartAddresses, b.FREInfo, b.DataWords, b.Other)
	fmt.Fprintf(w, "  sharing     %d FDEs repeat an earlier FDE's FRE data (%d bytes): %d bytes with one block per function,"+
		" %d with each block once (%s of .eh_frame + .eh_frame_hdr); %d FDEs share in this section\n",
		st.RepeatedFDEs, st.RepeatedBytes, st.UnsharedBytes, st.SharedBytes, percent(uint64(st.SharedBytes), eh), st.SharedFDEs)
	switch {
	case st.Shared:
		fmt.Fprintf(w, "  written     with shared FRE blocks\n")
	case st.Unshared != "":
		fmt.Fprintf(w, "  written     one block of FREs per function: %s\n", st.Unshared)
	default:
		fmt.Fprintf(w, "  written     one block of FREs per function\n")
	}
	if st.DryRun {
		fmt.Fprintf(w, "  skipped     %d functions, %d bytes\n", st.UncoveredFunctions, st.UncoveredBytes)
		for _, s := range st.Skipped {
			fmt.Fprintf(w, "    %6d  %s (%d bytes)\n", s.Functions, s.Reason, s.Bytes)
		}
		fmt.Fprintf(w, "  version 2   would leave out %d more functions (--sframe-version 2 covers %d)\n",
			st.V2Lost, st.CoveredFunctions-st.V2Lost)
		for _, s := range st.V2LostReasons {
			fmt.Fprintf(w, "    %6d  %s (%d bytes)\n", s.Functions, s.Reason, s.Bytes)
		}
	}
}
