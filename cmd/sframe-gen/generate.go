package main

import (
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
		return replace.UnwrapPath(err)
	}
	defer in.Dir.Close()
	job := sframegen.Job{In: in, Replace: replace.ReplaceOptions{KeepTimes: o.keepTimes}}
	if o.output != "" {
		if job.Out, err = replace.OutputPlace(o.output); err != nil {
			return fmt.Errorf("writing %s: %w", displayName(o.output), replace.UnwrapPath(err))
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
// dst): sframegen.Outcome.AppendMessages.
func (c *cli) printOutcome(file, dst string, o generateOptions, out *sframegen.Outcome, err error) {
	if b := out.AppendMessages(nil, file, dst, o.verbose, o.strict, err); len(b) > 0 {
		c.stderr.Write(b)
	}
}
