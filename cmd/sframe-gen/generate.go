package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// generateOptions are the flags of the default command.
type generateOptions struct {
	output  string
	raw     bool
	addr    uint64
	arch    string
	verbose bool
	strict  bool
	gas     bool
	version sframeVersion
	share   sframegen.Sharing   // --share-fres, --no-share-fres
	merge   sframegen.MergeFDEs // --merge-fdes
	source  cfi.Source
	// keepTimes (-p) gives what is written the input's times.
	keepTimes bool
	memory    *memoryBudget // --memory-limit: shared by every file of the run
}

// runGenerate is the default command: generate SFrame for FILE.
func (c *cli) runGenerate(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	var o generateOptions
	help := helpFlag(fs)
	version := fs.Bool("version", false, "print the version and exit")
	fs.StringVarP(&o.output, "output", "o", "", "write the result to `OUT` instead of replacing FILE")
	fs.BoolVar(&o.raw, "raw", false, "write only the .sframe section bytes (to OUT, or standard output)")
	fs.Uint64Var(&o.addr, "section-addr", 0, "with --raw on a linked file: the section address (`ADDR`, decimal or 0x hexadecimal) the PC-relative fields assume")
	fs.StringVar(&o.arch, "arch", "", "require FILE to be for `ARCH` (x86_64/amd64, aarch64/arm64, aarch64_be, s390x)")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "list the functions left without an SFrame FDE, with the reason")
	fs.BoolVar(&o.strict, "strict", false, "fail when any function cannot be represented or any CFI entry is broken")
	fs.BoolVar(&o.gas, "gas-compat", false, "reproduce GNU as --gsframe / ld byte for byte, including where their SFrame does not mean what the CFI means")
	shareFlags := shareFlags(fs)
	mergeFlag := mergeFlag(fs)
	source := cfiSourceFlags(fs, "read")
	sframeVer := sframeVersionFlags(fs)
	var b batchOptions
	fs.IntVarP(&b.jobs, "jobs", "j", defaultJobs(), "process `N` files at once")
	fs.BoolVarP(&b.quiet, "quiet", "q", false, "no progress line and no summary")
	fs.StringVar(&b.report, "report", "", "write what was done with each file to `FILE` as JSON lines")
	fs.BoolVarP(&b.preserveDates, "preserve-dates", "p", false, "keep the access and modification times of the files written")
	fs.StringVar(&b.outputDir, "output-dir", "", "write the results under `DIR` (mirroring the tree) instead of in place")
	budget := c.memoryLimitFlag(fs, "the most memory the files processed at once may take")
	fs.BoolVar(&b.sync, "sync", false, "with several PATHs: sync each file to the disk before it replaces the old one (as one FILE is)")
	setGenerateUsage(fs, c.stdout)
	if err := fs.Parse(args); err != nil {
		return c.fail("", usageError{msg: err.Error()})
	}
	if *help {
		fs.Usage()
		return exitOK
	}
	if *version {
		fmt.Fprintf(c.stdout, "sframe-gen %s\n", Version)
		return exitOK
	}
	if fs.NArg() == 0 {
		return c.fail("", usageError{msg: "expected a FILE, or PATHs"})
	}
	if err := mistypedCommand(fs.Arg(0)); err != nil {
		return c.fail("", err)
	}
	var err error
	if o.source, err = source(); err != nil {
		return c.fail("", usageError{msg: err.Error()})
	}
	if o.version, err = sframeVer(); err != nil {
		return c.fail("", usageError{msg: err.Error()})
	}
	if o.share, err = shareFlags(o.gas); err != nil {
		return c.fail("", usageError{msg: err.Error()})
	}
	if o.merge, err = mergeFlag(o.gas); err != nil {
		return c.fail("", usageError{msg: err.Error()})
	}
	if fs.Changed("section-addr") && !o.raw {
		return c.fail("", usageError{msg: "--section-addr goes with --raw"})
	}
	if err := generateFlagsAgree(fs, o); err != nil {
		return c.fail("", err)
	}
	if o.memory, err = budget(); err != nil {
		return c.fail("", usageError{msg: err.Error()})
	}
	if isBatch(fs, b) {
		if err := batchUsage(fs, o, b); err != nil {
			return c.fail("", err)
		}
		return c.runBatch(fs.Args(), o, b)
	}
	o.keepTimes = b.preserveDates
	var raw *replace.Stream
	switch _, descriptor := replace.InheritedFD(o.output); {
	case o.raw:
		// The section's bytes go to OUT as --report's lines go to
		// FILE: "-" (or no -o) standard output, a pipe as it is.
		output := cmp.Or(o.output, "-")
		if raw, err = openStream(c, output, 0o644); err != nil {
			return c.fail(output, err)
		}
		defer raw.Close()
		if raw.Terminal() {
			why := "standard output is a terminal: redirect it, or give -o OUT"
			if o.output != "" {
				why = o.output + " is a terminal"
			}
			return c.fail("", usageError{msg: "--raw writes binary data, and " + why})
		}
	case o.output == "-" || descriptor:
		return c.fail("", usageError{msg: fmt.Sprintf("-o %s: the patched file is written to a file (a new file renamed over OUT); --raw writes the section alone to standard output", o.output)})
	}
	g, err := c.generator(o)
	if err != nil {
		return c.fail("", err)
	}
	file := fs.Arg(0)
	if o.raw {
		err = c.generateRaw(g, file, o, raw)
	} else {
		err = c.generateFile(g, file, o)
	}
	if err != nil {
		return c.fail(file, err)
	}
	return exitOK
}

// generateFlagsAgree refuses the generate flags that say nothing
// (--gas-compat with --share-fres: shareFlags; an unknown --arch:
// generator).
func generateFlagsAgree(fs *pflag.FlagSet, o generateOptions) error {
	if fs.Changed("arch") && o.arch == "" {
		return usageError{msg: "--arch: empty; name the architecture FILE must be for (x86_64, aarch64, aarch64_be or s390x)"}
	}
	return nil
}

// generator returns the library's Generator for the run's options: its
// temporary files those a signal removes, the files admitted by the
// run's memory budget, the collector set to them (main), functions named
// in messages with -v and --strict.
func (c *cli) generator(o generateOptions) (*sframegen.Generator, error) {
	g, err := sframegen.NewGenerator(o.library(), sframegen.Resources{Temps: c.temps, Budget: o.memory, TuneGC: c.tuneRuntime, Names: o.verbose || o.strict})
	if err != nil && o.arch != "" {
		if _, aerr := sframegen.NewGenerator(sframegen.Options{Arch: o.arch}, sframegen.Resources{}); aerr != nil {
			return nil, usageError{msg: "--arch: " + aerr.Error()}
		}
	}
	if err != nil {
		return nil, usageError{msg: err.Error()}
	}
	return g, nil
}

// library returns the sframegen.Options of o.
func (o generateOptions) library() sframegen.Options {
	v := 3
	if o.version.v2() {
		v = 2
	}
	return sframegen.Options{
		Version: v, V2Layout: o.version.layout, GasCompat: o.gas, Share: o.share, MergeFDEs: o.merge,
		Strict: o.strict, Source: o.source, Arch: o.arch,
	}
}

// generateFile is the single-file form: FILE, as the user named it,
// written in place or to -o, through the pipeline every file of the
// batch form goes through (sframegen.Generator.Process).
func (c *cli) generateFile(g *sframegen.Generator, file string, o generateOptions) error {
	in, err := replace.NamedPlace(file)
	if err != nil {
		return unwrapPath(err)
	}
	defer in.Dir.Close()
	job := sframegen.Job{In: in, Replace: replace.ReplaceOptions{KeepTimes: o.keepTimes}}
	if o.output != "" {
		if job.Out, err = replace.OutputPlace(o.output); err != nil {
			return fmt.Errorf("writing %s: %w", displayName(o.output), unwrapPath(err))
		}
		defer job.Out.Dir.Close()
	}
	out, err := g.Process(job)
	dst := file
	if o.output != "" {
		dst = o.output
	}
	c.printOutcome(file, dst, o, &out, err)
	return describeError(err, o, o.output, nil)
}

// generateRaw is --raw: the section's bytes alone, to out (-o, or
// standard output; a linked file's encoded for --section-addr).
func (c *cli) generateRaw(g *sframegen.Generator, file string, o generateOptions, out *replace.Stream) error {
	sec, err := generateAt(g, file, o.addr)
	outcome := sframegen.Outcome{Reports: []sframegen.Report{{Section: sec}}}
	if sec == nil && !errors.Is(err, sframegen.ErrNoCFI) {
		outcome.Reports = nil
	}
	c.printOutcome(file, file, o, &outcome, err)
	if err != nil {
		return describeError(err, o, "", nil)
	}
	return out.Finish(c.temps, func(w io.Writer) error {
		_, err := sec.WriteTo(w)
		return err
	})
}

// generateAt is the section of the file the user named, encoded for addr
// (Generator.GenerateAt), opened as Process opens it: a symbolic link
// followed, anything but a regular file refused before it is read.
func generateAt(g *sframegen.Generator, file string, addr uint64) (*sframegen.Section, error) {
	src, err := replace.OpenNamed(file)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return g.GenerateAt(src.File, src.Size(), addr)
}

// describeError says err as the command's messages do: naming the flag
// that makes it an error, the output that could not be written (output,
// and the other names outLinks of an output tree).
func describeError(err error, o generateOptions, output string, outLinks []string) error {
	var strict *sframegen.StrictError
	var arch *sframegen.ArchError
	var oe *sframegen.OutputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &strict):
		return fmt.Errorf("--strict: %s", strict.Summary())
	case errors.Is(err, sframegen.ErrNoFunctions):
		return errors.New("no function has an SFrame representation (see -v); nothing written")
	case errors.As(err, &arch):
		return fmt.Errorf("%w (--arch)", err)
	case errors.Is(err, sframegen.ErrShareBigEndian):
		return fmt.Errorf("--share-fres: %w", err)
	case errors.As(err, &oe) && oe.Link >= 0 && oe.Link < len(outLinks):
		return fmt.Errorf("%s %s: %w", oe.Op, displayName(outLinks[oe.Link]), oe.Err)
	case errors.As(err, &oe):
		return fmt.Errorf("%s %s: %w", oe.Op, displayName(output), oe.Err)
	}
	return err
}

// printOutcome prints what Process found and did with file (written to
// dst): the CFI entries that could not be read; with -v or --strict the
// functions left without an SFrame FDE, with the reason; the warnings;
// with -v what was written, or why nothing was. err is Process's.
func (c *cli) printOutcome(file, dst string, o generateOptions, out *sframegen.Outcome, err error) {
	// Gathered and written at once; nothing made for a quiet file.
	w := new(bytes.Buffer)
	defer func() {
		if w.Len() > 0 {
			c.stderr.Write(w.Bytes())
		}
	}()
	for _, rep := range out.Reports {
		label := displayName(file)
		if rep.Member != "" {
			label = fmt.Sprintf("%s(%s)", displayName(file), displayName(rep.Member))
		}
		sec := rep.Section
		if sec == nil {
			if o.verbose {
				fmt.Fprintf(w, "sframe-gen: %s: no call-frame information; nothing to generate\n", label)
			}
			continue
		}
		for _, e := range sec.EntryErrors {
			fmt.Fprintf(w, "sframe-gen: %s: %v\n", label, e)
		}
		for _, s := range sec.Omitted() {
			switch {
			case s.Emitted && o.verbose:
				fmt.Fprintf(w, "sframe-gen: %s: %s: SFrame FDE without FREs (signal frame): %s\n", label, displayName(sec.FunctionName(s.FDE)), s.Reason)
			case !s.Emitted && (o.verbose || o.strict):
				fmt.Fprintf(w, "sframe-gen: %s: %s: no SFrame FDE: %s\n", label, displayName(sec.FunctionName(s.FDE)), s.Reason)
			}
		}
	}
	if err != nil {
		return
	}
	for _, warning := range out.Warnings {
		fmt.Fprintf(w, "sframe-gen: %s: %s\n", displayName(file), warning)
	}
	if !o.verbose {
		return
	}
	for _, rep := range out.Reports {
		label, name := displayName(file), displayName(dst)
		if rep.Member != "" {
			label = fmt.Sprintf("%s(%s)", label, displayName(rep.Member))
			name = label
		}
		switch {
		case rep.Section == nil:
		case rep.UpToDate:
			fmt.Fprintf(w, "sframe-gen: %s: up to date: its SFrame is already what would be written\n", label)
		case out.Status != sframegen.Patched:
		case rep.Section.Target.Relocatable:
			printSummary(w, name, rep.Section, "with .rela.sframe")
		default:
			printSummary(w, name, rep.Section, linkedWhere(rep.Section))
		}
	}
	if out.Kind == "archive" && out.Status == sframegen.UpToDate {
		fmt.Fprintf(w, "sframe-gen: %s: up to date: its SFrame is already what would be written\n", displayName(file))
	}
}

// linkedWhere says where sec, of a linked file, went, for summary.
func linkedWhere(sec *sframegen.Section) string {
	l := sec.Layout
	s := fmt.Sprintf("at %#x, PT_GNU_SFRAME", l.Addr)
	if l.Replaced {
		s += "; in place of an earlier run's, patched as the file that run was given"
	}
	if l.PhdrExecCleared {
		s += "; PF_X cleared from PT_PHDR (the Linux kernel registers SFrame for every PF_X header)"
	}
	return s
}

// printSummary prints, with -v, what was written to dst, and whether FRE
// blocks are shared (or why not).
func printSummary(w io.Writer, dst string, sec *sframegen.Section, where string) {
	shared := fmt.Sprintf(", %s sharing an earlier one's FREs", plural(sec.SharedFDEs(), "FDE"))
	if !sec.Shared {
		shared = ", one block of FREs per function: " + sec.Unshared
	}
	fmt.Fprintf(w, "sframe-gen: %s: wrote .sframe (%s, %s, %s%s) %s\n", dst, plural(sec.Size(), "byte"), plural(sec.NumFDEs(), "FDE"), plural(sec.NumFREs(), "FRE"), shared, where)
}
