package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"github.com/spf13/pflag"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// batchOptions are the flags of the batch form, sframe-gen [flags] PATH...
type batchOptions struct {
	jobs          int
	quiet         bool
	report        string
	preserveDates bool
	outputDir     string
	sync          bool
}

// defaultJobs is the number of files processed at once by default: the
// CPUs this process may run on.
func defaultJobs() int { return runtime.GOMAXPROCS(0) }

// runBatch processes every file under the paths (directories walked
// recursively) with the library (sframegen.Walk, Generator.ProcessTree),
// prints each file's messages in the order of the walk, then a summary,
// and writes the report. Exit status 1 when any file failed.
func (c *cli) runBatch(paths []string, o generateOptions, b batchOptions) int {
	var reportTo *replace.Stream // --report's, checked before any file is patched
	if b.report != "" {
		var err error
		if reportTo, err = openStream(c, b.report, 0o600); err != nil {
			return c.fail(b.report, fmt.Errorf("--report: %w", err))
		}
		defer reportTo.Close()
	}
	g, err := c.generator(o)
	if err != nil {
		return c.fail("", err)
	}
	tree, err := sframegen.Walk(paths, sframegen.WalkOptions{OutputDir: b.outputDir, Resume: b.outputDir == ""})
	if err != nil {
		return c.fail(walkError(err))
	}
	defer tree.Close()
	var total int64
	files := 0
	for _, f := range tree.Files {
		if f.Regular() {
			total += f.Size
			files++
		}
	}
	prog := newProgress(c.stderr, b.quiet, files, total)
	results := make([]fileResult, len(tree.Files))
	var sum summary
	var rep []byte // --report's lines
	err = g.ProcessTree(tree, sframegen.TreeOptions{
		Workers: b.jobs, KeepTimes: b.preserveDates, Sync: b.sync,
		// The status line counts the regular files, as files and total
		// do: links, directories and operands that cannot be read are
		// no part of them.
		Begin: func(i int) { prog.start(tree.Files[i].Path, tree.Files[i].Size) },
		Done: func(i int, out *sframegen.Outcome, err error) {
			f := tree.Files[i]
			results[i] = c.treeResult(f, o, out, err)
			if f.Regular() {
				prog.finish(f.Path, f.Size)
			}
		},
		Ordered: func(i int) {
			r := &results[i]
			if len(r.msgs) > 0 {
				prog.print(r.msgs)
			}
			if tree.Files[i].Mode.IsDir() {
				return
			}
			sum.add(r)
			if reportTo != nil {
				rep = tree.Files[i].AppendReport(rep, &r.out)
			}
			r.msgs = nil
		},
	})
	if err != nil {
		fmt.Fprintf(c.stderr, "sframe-gen: %v\n", err)
		sum.counts[statusFailed]++
	}
	prog.stop()
	if !b.quiet {
		fmt.Fprintf(c.stderr, "sframe-gen: %s\n", sum)
	}
	if reportTo != nil {
		if err := reportTo.Finish(c.temps, func(w io.Writer) error { _, err := w.Write(rep); return err }); err != nil {
			return c.fail(b.report, err)
		}
	}
	if sum.counts[statusFailed] > 0 {
		return exitFailure
	}
	return exitOK
}

// walkError is what fail says of Walk's error: two inputs with one output
// a usage error, the output directory that cannot be made named.
func walkError(err error) (string, error) {
	var clash *sframegen.OutputClashError
	var pe *fs.PathError
	switch {
	case errors.As(err, &clash) && clash.Other == "":
		return "", usageError{msg: fmt.Sprintf("--output-dir would write %s over itself", displayName(clash.Path))}
	case errors.As(err, &clash):
		return "", usageError{msg: fmt.Sprintf("%s and %s would both be written to %s (--output-dir)", displayName(clash.Other), displayName(clash.Path), displayName(clash.Output))}
	case errors.As(err, &pe) && pe.Op == "mkdir":
		return pe.Path, pe.Err
	}
	return "", err
}

// summary counts the outcomes of a batch.
type summary struct {
	counts [statusFailed + 1]int
	fdes   int
}

func (s *summary) add(r *fileResult) {
	s.counts[r.out.Status]++
	if r.out.Status == statusPatched || r.out.Status == statusUpToDate {
		s.fdes += r.out.FDEs
	}
}

func (s summary) String() string {
	n := 0
	for _, k := range s.counts {
		n += k
	}
	return fmt.Sprintf("%s: %d patched, %d up to date, %d without CFI, %d skipped, %d failed; %s covered",
		plural(n, "file"), s.counts[statusPatched], s.counts[statusUpToDate], s.counts[statusNoCFI], s.counts[statusSkipped], s.counts[statusFailed], plural(s.fdes, "function"))
}

// isBatch reports whether the command line asks for the batch form:
// several paths, a directory, or a flag only the batch form has. One
// FILE without them keeps the single-file form (a file that is not ELF is
// then an error).
func isBatch(fs *pflag.FlagSet, b batchOptions) bool {
	if fs.NArg() != 1 || fs.Changed("jobs") || b.report != "" || b.outputDir != "" {
		return true
	}
	st, err := os.Stat(fs.Arg(0))
	return err == nil && st.IsDir()
}

// batchUsage checks the flags that go with one FILE only.
func batchUsage(fs *pflag.FlagSet, o generateOptions, b batchOptions) error {
	switch {
	case o.output != "":
		return usageError{msg: "-o goes with one FILE; for several, --output-dir DIR"}
	case o.raw:
		return usageError{msg: "--raw goes with one FILE"}
	case b.jobs < 1:
		return usageError{msg: fmt.Sprintf("--jobs %d: want at least 1", b.jobs)}
	}
	return nil
}
