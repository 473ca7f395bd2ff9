package main

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/pflag"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/lower"
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
	share   sframegen.Sharing // --share-fres, --no-share-fres
	source  cfi.Source
	hold    <-chan struct{} // closed when the copy generate makes meanwhile is done
	// keepTimes (-p) gives what is written the input's times.
	keepTimes bool
	memory    *memoryBudget // --memory-limit: shared by every file of the run
}

// charge takes cost out of the run's memory budget (waiting while other
// files hold it) and returns what gives it back.
func (o generateOptions) charge(cost fileCost) (release func(), err error) {
	if err := o.memory.acquire(cost.bytes, cost.what); err != nil {
		return nil, err
	}
	return func() { o.memory.release(cost.bytes) }, nil
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
	fs.Uint64Var(&o.addr, "section-addr", 0, "with --raw on a linked file: the section address the PC-relative fields assume")
	fs.StringVar(&o.arch, "arch", "", "require FILE to be for `ARCH` (x86_64/amd64, aarch64/arm64, aarch64_be, s390x)")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "list the functions left without an SFrame FDE, with the reason")
	fs.BoolVar(&o.strict, "strict", false, "fail when any function cannot be represented or any CFI entry is broken")
	fs.BoolVar(&o.gas, "gas-compat", false, "reproduce GNU as --gsframe / ld byte for byte, including where their SFrame does not mean what the CFI means")
	shareFlags := shareFlags(fs)
	source := cfiSourceFlags(fs, "read")
	sframeVer := sframeVersionFlags(fs)
	var b batchOptions
	fs.IntVarP(&b.jobs, "jobs", "j", defaultJobs(), "process `N` files at once")
	fs.BoolVarP(&b.quiet, "quiet", "q", false, "no progress line and no summary")
	fs.StringVar(&b.report, "report", "", "write what was done with each file to `FILE` as JSON lines")
	fs.BoolVarP(&b.preserveDates, "preserve-dates", "p", false, "keep the access and modification times of the files written")
	fs.StringVar(&b.outputDir, "output-dir", "", "write the results under `DIR` (mirroring the tree) instead of in place")
	memLimit := sizeValue(defaultMemoryLimit())
	fs.Var(&memLimit, "memory-limit", "the most memory the files processed at once may take (`SIZE`: 512M, 2G; default half the machine's memory, at most 2G)")
	fs.BoolVar(&b.sync, "sync", false, "with several PATHs: sync each file to the disk before it replaces the old one (as one FILE is)")
	setGenerateUsage(fs, c.stdout)
	if err := fs.Parse(args); err != nil {
		return c.fail("", usageError{err.Error()})
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
		return c.fail("", usageError{"expected a FILE, or PATHs"})
	}
	if err := mistypedCommand(fs.Arg(0)); err != nil {
		return c.fail("", err)
	}
	var err error
	if o.source, err = source(); err != nil {
		return c.fail("", usageError{err.Error()})
	}
	if o.version, err = sframeVer(); err != nil {
		return c.fail("", usageError{err.Error()})
	}
	if o.share, err = shareFlags(o.gas); err != nil {
		return c.fail("", usageError{err.Error()})
	}
	if fs.Changed("section-addr") && !o.raw {
		return c.fail("", usageError{"--section-addr goes with --raw"})
	}
	if err := generateFlagsAgree(fs, o); err != nil {
		return c.fail("", err)
	}
	if memLimit < minMemoryLimit {
		return c.fail("", usageError{fmt.Sprintf("--memory-limit %s: want at least %s", formatSize(int64(memLimit)), formatSize(minMemoryLimit))})
	}
	o.memory = newMemoryBudget(int64(memLimit))
	if c.memoryLimit != nil {
		c.memoryLimit(int64(memLimit))
	}
	if isBatch(fs, b) {
		if err := batchUsage(fs, o, b); err != nil {
			return c.fail("", err)
		}
		return c.runBatch(fs.Args(), o, b)
	}
	o.keepTimes = b.preserveDates
	// FILE is resolved and opened once: everything after reads and
	// writes through what is open.
	file := fs.Arg(0)
	src, err := openNamed(file)
	if err != nil {
		return c.fail(file, err)
	}
	defer src.Dir.Close()
	defer src.Close()
	if isArchive(src.File) && !o.raw {
		return c.generateArchive(file, src, o)
	}
	if err := c.generate(file, src, o); err != nil {
		return c.fail(file, err)
	}
	return exitOK
}

// generateFlagsAgree refuses the generate flags that say nothing or
// contradict each other: an empty or unknown --arch (--gas-compat with
// --share-fres: shareFlags).
func generateFlagsAgree(fs *pflag.FlagSet, o generateOptions) error {
	switch {
	case fs.Changed("arch") && o.arch == "":
		return usageError{"--arch: empty; name the architecture FILE must be for (x86_64, aarch64, aarch64_be or s390x)"}
	case o.arch != "":
		if _, err := lower.TargetByName(o.arch); err != nil {
			return usageError{"--arch: " + err.Error()}
		}
	}
	return nil
}

// generate runs the pipeline on one file: cfi → lower → emit → elfpatch.
func (c *cli) generate(file string, src *elfpatch.Source, o generateOptions) error {
	in := src.File
	ef, err := elf.NewFile(in)
	if err != nil {
		return describeCut(in, src.Size(), err)
	}
	target, err := lower.TargetForELF(ef)
	if err != nil {
		return err
	}
	if o.arch != "" {
		want, err := lower.TargetByName(o.arch)
		if err != nil {
			return usageError{err.Error()}
		}
		if want.Arch != target.Arch || want.BigEndian != target.BigEndian {
			return fmt.Errorf("file is for %s, not %s (--arch)", target, want)
		}
	}
	cost := linkedCost(ef, o.source)
	if target.Relocatable {
		if cost, err = objectCost(ef, src.Size(), o.source); err != nil {
			return err
		}
	}
	release, err := o.charge(cost)
	if err != nil {
		return err
	}
	defer release()
	if c.heapFor != nil {
		size, _ := cfiSize(ef)
		c.heapFor(size)
	}
	if !target.Relocatable && !o.raw && hasCFISection(ef) {
		return c.generateLinked(file, src, ef, target, o)
	}
	res, err := c.lowerCFI(file, in, src.Size(), ef, target, o)
	if err == errNoCFI {
		if o.raw {
			return errNoCFI
		}
		if o.output == "" {
			return nil
		}
		// The output is the input unchanged.
		return c.replace(src, o, func(tmp *os.File) error {
			return elfpatch.CopySparse(tmp, in, src.Size())
		})
	}
	if err != nil {
		return err
	}

	if target.Relocatable {
		data, err := res.Section.Encode()
		if err != nil {
			return fmt.Errorf("encoding .sframe: %w", err)
		}
		if o.raw {
			return c.writeRaw(o.output, data)
		}
		relocs := make([]elfpatch.Reloc, len(res.Relocs))
		for i, r := range res.Relocs {
			relocs[i] = elfpatch.Reloc{Offset: r.Offset, Type: r.Type, Section: uint32(r.Section), Addend: r.Addend}
		}
		if o.output == "" && ef.Section(".sframe") != nil && objectUpToDate(in, src.Size(), data, relocs) {
			c.upToDate(file, o)
			return nil
		}
		err = c.replace(src, o, func(tmp *os.File) error {
			if !src.Sparse() {
				return elfpatch.PatchObject(in, src.Size(), tmp, data, relocs)
			}
			return patchSparseObject(in, src.Size(), tmp, data, relocs)
		})
		if err != nil {
			return err
		}
		c.warnSignature(file, in, src.Size())
		if o.verbose {
			c.summary(file, o, target, res, len(data), "with .rela.sframe")
		}
		return nil
	}

	parts, err := res.EncodePlaced(o.addr)
	if err != nil {
		return fmt.Errorf("encoding .sframe: %w", err)
	}
	return c.writeRaw(o.output, parts...)
}

// patchSparseObject is elfpatch.PatchObject for an object with holes: the
// patched object keeps its blocks of zeros as holes (writeKeepingHoles).
func patchSparseObject(in *os.File, size int64, tmp *os.File, sec []byte, relocs []elfpatch.Reloc) error {
	data, err := readAll(in, size)
	if err != nil {
		return err
	}
	out, err := elfpatch.PatchObjectBytes(data, sec, relocs)
	if err != nil {
		return err
	}
	return writeKeepingHoles(tmp, out)
}

// errNoCFI is lowerCFI's error when nothing describes any code.
var errNoCFI = sframegen.ErrNoCFI

// lowerCFI reads and lowers the CFI of file (sframegen.Lower) and reports
// (report) what it could not lower. It returns errNoCFI, and says so with
// -v, when there is none (as for gas, which makes no .sframe without
// .cfi_startproc). in is nil for an archive member (an object).
func (c *cli) lowerCFI(file string, in *os.File, size int64, ef *elf.File, target lower.Target, o generateOptions) (*lower.Result, error) {
	var r io.ReaderAt
	if in != nil {
		r = in
	}
	sec, err := sframegen.Lower(r, size, ef, o.library())
	if errors.Is(err, sframegen.ErrShareBigEndian) {
		err = fmt.Errorf("--share-fres: %w", err)
	}

	if err == errNoCFI && o.verbose {
		fmt.Fprintf(c.stderr, "sframe-gen: %s: no call-frame information; nothing to generate\n", displayName(file))
	}
	if err != nil {
		return nil, err
	}
	return sec.Result, c.report(file, ef, sec.EntryErrors, sec.Result, o)
}

// library returns the sframegen.Options of o (the --arch check is
// generate's own, before). The command's scheduling: while generate
// copies the file (o.hold), the copy has a CPU of its own, so one worker
// waits for it to end (-o on libLLVM.so: 188 -> 221 ms median without, 31
// alternated runs). Huge pages for one file's run (--raw, or the patched
// copy: o.hold), whose lowering is mostly faulting in fresh memory
// (libLLVM.so, alternated runs: --raw 37 -> 45 ms median without, 21 runs
// on a machine where a fresh page cost 1.5-5 us; -o 83 -> 112 ms, 31 runs,
// on one where it cost 13 us); not in the batch form, whose files are
// mostly small and whose memory is reused from file to file.
func (o generateOptions) library() sframegen.Options {
	v := 3
	if o.version.v2() {
		v = 2
	}
	hold, huge := o.hold, o.raw || o.hold != nil
	return sframegen.Options{
		Version: v, V2Layout: o.version.layout, GasCompat: o.gas, Share: o.share, Source: o.source,
		Tune: func(lo *lower.Options) {
			if lo.Workers > 1 {
				lo.Hold = hold
			}
			lo.HugePages = huge
		},
	}
}

// hasCFISection reports whether f has a section cfi.Read may read: without
// one, generate does not start copying a linked file it will leave as it is.
func hasCFISection(f *elf.File) bool {
	_, ok := cfiSize(f)
	return ok
}

// cfiSize returns the size of f's largest section cfi.Read may read, and
// whether f has one.
func cfiSize(f *elf.File) (size uint64, ok bool) {
	for _, name := range []string{".eh_frame", ".debug_frame", ".zdebug_frame"} {
		if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
			size, ok = max(size, s.Size), true
		}
	}
	return size, ok
}

// errUnchanged makes replace leave the file as it is; errUpToDate too,
// the file's SFrame being already what would be written.
var (
	errUnchanged = errors.New("unchanged")
	errUpToDate  = errors.New("up to date")
)

// generateLinked writes a linked file with its new section. The input is
// copied to the output file to file (copy_file_range) while the CFI is
// read, the section made, placed and encoded, so that the copy, most of
// the time on big files, overlaps the work.
func (c *cli) generateLinked(file string, src *elfpatch.Source, ef *elf.File, target lower.Target, o generateOptions) error {
	var made linkedSection
	in := src.File
	err := c.replace(src, o, func(tmp *os.File) error {
		// The copy reads in through its file offset (copy_file_range
		// needs an *os.File source); everything else reads at offsets.
		// Holes of a sparse input stay holes. The copy, the run's
		// longest part, runs here; the section is made, placed and
		// encoded meanwhile on a goroutine of its own, which writes
		// over the copy once it is done.
		copying := make(chan struct{})
		var copyErr error // set before copying is closed
		o.hold = copying
		wait := func() error {
			<-copying
			return copyErr
		}
		done := make(chan error, 1)
		go func() {
			var err error
			made, err = c.patchLinked(file, in, tmp, src.Size(), ef, target, o, wait)
			done <- err
		}()
		copyErr = elfpatch.CopySparse(tmp, in, src.Size())
		close(copying)
		return <-done
	})
	switch err {
	case errUnchanged:
		return nil
	case errUpToDate:
		c.upToDate(file, o)
		return nil
	}
	if err == nil && made.res != nil {
		c.warnExecHeaders(file, ef)
		if o.verbose {
			c.summary(file, o, target, made.res, made.size, linkedWhere(made.layout))
		}
	}
	return err
}

// linkedSection is the section patchLinked wrote into a linked file.
type linkedSection struct {
	res    *lower.Result
	size   int
	layout elfpatch.Layout
}

// patchLinked makes the section of a linked file and writes it, once
// wait says the copy of in to tmp is done, with what changes over the
// copy.
func (c *cli) patchLinked(file string, in, tmp *os.File, inSize int64, ef *elf.File, target lower.Target, o generateOptions, wait func() error) (linkedSection, error) {
	res, size, err := c.makeLinked(file, in, inSize, ef, target, o)
	if err != nil {
		if cerr := wait(); cerr != nil {
			return linkedSection{}, cerr
		}
		switch {
		case err == errNoCFI && o.output == "":
			return linkedSection{}, errUnchanged // in place: nothing to write
		case err == errNoCFI:
			return linkedSection{}, nil // the output is the input unchanged: the copy
		}
		return linkedSection{}, err
	}
	encode := func(addr uint64) ([][]byte, error) {
		parts, err := res.EncodePlaced(addr)
		if err != nil {
			return nil, fmt.Errorf("encoding .sframe: %w", err)
		}
		return parts, nil
	}
	if o.output == "" && ef.Section(".sframe") != nil && upToDate(in, size, encode) {
		if cerr := wait(); cerr != nil {
			return linkedSection{}, cerr
		}
		return linkedSection{}, errUpToDate
	}
	layout, err := elfpatch.PatchLinkedCopyParts(in, tmp, size, encode, wait)
	return linkedSection{res, size, layout}, err
}

// makeLinked lowers the CFI of a linked file (lowerCFI, which reports)
// and sizes its section.
func (c *cli) makeLinked(file string, in *os.File, inSize int64, ef *elf.File, target lower.Target, o generateOptions) (*lower.Result, int, error) {
	res, err := c.lowerCFI(file, in, inSize, ef, target, o)
	if err != nil {
		return nil, 0, err
	}
	if res.Section.NumFDEs() == 0 {
		return nil, 0, errors.New("no function has an SFrame representation (see -v); nothing written")
	}
	size, err := res.Section.Size()
	if err != nil {
		return nil, 0, fmt.Errorf("encoding .sframe: %w", err)
	}
	return res, size, nil
}

// linkedWhere says where the section of a linked file went, for summary.
func linkedWhere(l elfpatch.Layout) string {
	s := fmt.Sprintf("at %#x, PT_GNU_SFRAME", l.Addr)
	if l.PhdrExecCleared {
		s += "; PF_X cleared from PT_PHDR (the Linux kernel registers SFrame for every PF_X header)"
	}
	return s
}

// warnExecHeaders warns, once the section is written, about the program
// headers of ef other than PT_LOAD and PT_PHDR (whose PF_X the patch
// clears) that carry PF_X: the Linux kernel registers the SFrame section
// for each of them too, and verify reports them.
func (c *cli) warnExecHeaders(file string, ef *elf.File) {
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD && p.Type != elf.PT_PHDR && p.Flags&elf.PF_X != 0 {
			fmt.Fprintf(c.stderr, "sframe-gen: %s: warning: %v has PF_X: the Linux kernel registers the SFrame section for every PF_X program header, this one too\n", file, p.Type)
		}
	}
}

// summary prints, with -v, what was written, and whether FRE blocks are
// shared (or why not).
func (c *cli) summary(file string, o generateOptions, target lower.Target, res *lower.Result, size int, where string) {
	dst := file
	if o.output != "" {
		dst = o.output
	}
	shared := fmt.Sprintf(", %d FDEs sharing an earlier one's FREs", res.Shared)
	if share, why, _ := sframegen.SharingFor(target, o.library()); !share {
		shared = ", one block of FREs per function: " + why
	}
	fmt.Fprintf(c.stderr, "sframe-gen: %s: wrote .sframe (%d bytes, %d FDEs, %d FREs%s) %s\n", displayName(dst), size, res.Section.NumFDEs(), res.Section.NumFREs(), shared, where)
}

// upToDate says, with -v, that file was left as it is because its SFrame
// is already what would be written.
func (c *cli) upToDate(file string, o generateOptions) {
	if o.verbose {
		fmt.Fprintf(c.stderr, "sframe-gen: %s: up to date: its SFrame is already what would be written\n", file)
	}
}

// replace writes the result over src (in place: only while it is still
// the file read, unchanged; a file with other hard links in its own
// inode, so they stay one file), or to o.output when one is given (as
// named: a symbolic link followed).
func (c *cli) replace(src *elfpatch.Source, o generateOptions, write func(*os.File) error) error {
	dst := src.Place
	if o.output != "" {
		var err error
		if dst, err = elfpatch.NamedPlace(o.output); err != nil {
			return fmt.Errorf("writing %s: %w", o.output, unwrapPath(err))
		}
		defer dst.Dir.Close()
	}
	opt := elfpatch.ReplaceOptions{KeepTimes: o.keepTimes, InPlace: o.output == "" && src.Links() > 1}
	// An error of write about the input (its layout) is reported as it
	// is; one about the output (creating, writing, renaming the temporary
	// file) names the output.
	var inputErr error
	err := c.temps.Replace(dst, src, src.Mode().Perm(), opt, func(tmp *os.File) error {
		err := write(tmp)
		var pe *fs.PathError
		if err != nil && !(errors.As(err, &pe) && pe.Path == tmp.Name()) {
			inputErr = err
		}
		return err
	})
	if err != nil && err != inputErr && o.output != "" {
		return fmt.Errorf("writing %s: %w", displayName(o.output), err)
	}
	return err
}

// writeRaw writes section bytes, given in pieces, to output, or to stdout
// when output is empty.
func (c *cli) writeRaw(output string, parts ...[]byte) error {
	write := func(w io.Writer) error {
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return nil
	}
	if output == "" {
		return write(c.stdout)
	}
	return c.temps.ReplaceFile(output, 0o644, func(tmp *os.File) error { return write(tmp) })
}

// report prints, with -v, one line per function left without an SFrame FDE,
// and with --strict turns any such function or broken CFI entry into an error.
func (c *cli) report(file string, ef *elf.File, errs []*cfi.EntryError, res *lower.Result, o generateOptions) error {
	var names *symbolizer
	w := bufio.NewWriter(c.stderr)
	defer w.Flush()
	problems := 0
	for _, e := range errs {
		problems++
		fmt.Fprintf(w, "sframe-gen: %s: %v\n", displayName(file), e)
	}
	for _, s := range res.Skipped {
		if s.Emitted {
			if o.verbose {
				if names == nil {
					names = newSymbolizer(ef)
				}
				fmt.Fprintf(w, "sframe-gen: %s: %s: SFrame FDE without FREs (signal frame): %s\n", displayName(file), displayName(names.name(s.FDE)), s.Reason)
			}
			continue
		}
		problems++
		if o.verbose || o.strict {
			if names == nil {
				names = newSymbolizer(ef)
			}
			fmt.Fprintf(w, "sframe-gen: %s: %s: no SFrame FDE: %s\n", displayName(file), displayName(names.name(s.FDE)), s.Reason)
		}
	}
	if o.strict && problems > 0 {
		return fmt.Errorf("--strict: %d functions or CFI entries could not be represented", problems)
	}
	return nil
}
