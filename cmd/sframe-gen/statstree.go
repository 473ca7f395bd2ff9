package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit/stats"
)

// The tree form of stats: "sframe-gen stats [flags] PATH..." with more
// than one operand or a directory. The operands are walked as the batch
// form of generate walks them (sframegen.Walk: directories recursively, no
// symbolic link found in them followed, every file opened below its held
// directory); each ELF file, and each member of a static archive that
// generate would patch, gets the statistics of the one-file form, and
// the run ends with their sum. A file named on the command line that
// generate would not patch (not ELF, another architecture) fails, as
// generate fails it.

// statsFile is what the tree form found in one file of the walk.
type statsFile struct {
	objects   []*stats.Stats
	installed int64 // the file's size, when it is ELF or an archive
	noCFI     int   // ELF files or members with neither .sframe nor CFI
	skipped   int
	failed    int
	msgs      []byte // one-line errors, in order
}

// runStatsTree prints the statistics of every ELF file and archive member
// under paths, then their total; exit status 1 when a file failed.
func (c *cli) runStatsTree(paths []string, opts sframegen.Options, b *memoryBudget, dry, asJSON bool, workers int) int {
	// Walked as the batch form walks a tree in place, but for what a
	// killed run left: its temporary names are passed over, not resumed
	// (stats writes nothing).
	tree, err := sframegen.Walk(paths, sframegen.WalkOptions{})
	if err != nil {
		return c.fail("", err)
	}
	defer tree.Close()
	if workers < 1 {
		workers = defaultJobs()
	}
	results := make([]statsFile, len(tree.Files))
	w := bufio.NewWriter(c.stdout)
	enc := json.NewEncoder(jsonWriter{w})
	enc.SetIndent("", "  ")
	total := stats.NewTotal()
	status := exitOK
	tree.Each(workers, func(i int) {
		results[i] = statsOfJob(tree.Files[i], opts, b, dry)
	}, func(i int) {
		r := &results[i]
		if len(r.msgs) > 0 {
			w.Flush()
			c.stderr.Write(r.msgs)
		}
		if r.failed > 0 {
			status = exitFailure
		}
		total.InstalledBytes += r.installed
		total.FilesWithoutCFI += r.noCFI
		total.FilesSkipped += r.skipped
		total.FilesFailed += r.failed
		for _, st := range r.objects {
			total.Add(st)
			if asJSON {
				enc.Encode(st)
			} else {
				writeStatsLine(w, st)
			}
		}
		results[i] = statsFile{} // the objects are printed: let them go
	})
	if asJSON {
		enc.Encode(struct {
			Total *stats.Total `json:"total"`
		}{total})
	} else {
		writeStatsTotal(w, total)
	}
	if err := w.Flush(); err != nil {
		return c.fail("", err)
	}
	return status
}

// statsOfJob reads the file of one job of the walk (opened below its
// held directory, never through a symbolic link) and computes the
// statistics of it, or of each archive member generate would patch.
//
// What is read is charged to b, the run's --memory-limit, before it is
// read, as the one-file form charges it (elfread.Meter): the workers
// share the budget, a file waiting for memory others hold.
func statsOfJob(j *sframegen.TreeFile, opts sframegen.Options, b *memoryBudget, dry bool) (r statsFile) {
	fail := func(name string, err error) {
		r.failed++
		r.msgs = fmt.Appendf(r.msgs, "sframe-gen: %s: %v\n", displayName(name), err)
	}
	switch {
	case j.Err != nil:
		fail(j.Path, j.Err)
		return r
	case !j.Regular():
		return r // links, directories, FIFOs and devices are not read
	}
	file, size, err := j.Open()
	if err != nil {
		fail(j.Path, unwrapPath(err))
		return r
	}
	defer file.Close()
	// What generate leaves alone as not ELF, and does not count: a file
	// that starts with neither the ELF nor the archive magic (an empty
	// one too).
	var magic [8]byte // an archive's "!<arch>\n"
	if n, _ := file.ReadAt(magic[:], 0); string(magic[:n]) != "!<arch>\n" && (n < 4 || string(magic[:4]) != "\x7fELF") {
		if j.Named {
			fail(j.Path, elfread.ErrNotELF) // named: as generate fails it
		} else {
			r.skipped++
		}
		return r
	}
	meter := elfread.NewMeter(b)
	defer meter.Release()
	g := meteredGenerator(opts, meter)
	_, err = meter.Objects(file, size, func(o elfread.Object) bool {
		in := elfInput{name: j.Path, f: o.File, r: o.R, size: o.Size, meter: meter}
		if o.Member != "" {
			in.name, in.member = fmt.Sprintf("%s(%s)", j.Path, o.Member), true
		}
		if o.Err != nil {
			fail(in.name, o.Err)
			return true
		}
		if err := sframegen.Supported(in.f); err != nil {
			if j.Named && o.Member == "" {
				fail(in.name, err) // named: as generate fails it
			} else {
				r.skipped++ // generate leaves it alone
			}
			return false
		}
		st, err := fileStats(in, g, dry)
		switch {
		case errors.Is(err, sframegen.ErrNoCFI):
			r.noCFI++ // generate leaves it as it is
			return false
		case err != nil:
			fail(in.name, err)
			return true
		}
		r.objects = append(r.objects, st)
		return true
	})
	if err != nil {
		fail(j.Path, err)
		return r
	}
	r.installed = size
	return r
}

// writeStatsLine prints one file's statistics on one line.
func writeStatsLine(w io.Writer, st *stats.Stats) {
	eh := st.EHFrameBytes + st.EHFrameHdrBytes
	what := ".sframe"
	if st.DryRun {
		what = "dry run"
	}
	fmt.Fprintf(w, "%s: %s %d bytes, %s of .eh_frame + .eh_frame_hdr %d; functions %d of %d covered\n",
		displayName(st.File), what, st.SectionBytes, percent(uint64(st.SectionBytes), eh), eh,
		st.CoveredFunctions, st.CFIFunctions)
}

// writeStatsTotal prints the total of a tree.
func writeStatsTotal(w io.Writer, t *stats.Total) {
	fmt.Fprintf(w, "total: %s described, %d without CFI, %d skipped, %d failed; %d bytes of ELF files and archives\n",
		plural(t.Counts.Files, "file"), t.FilesWithoutCFI, t.FilesSkipped, t.FilesFailed, t.InstalledBytes)
	writeStatsCounts(w, "  ", &t.Counts, t.InstalledBytes)
	for _, by := range []map[string]*stats.Counts{t.ByKind, t.ByABI} {
		keys := make([]string, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c := by[k]
			fmt.Fprintf(w, "%s: %s, %d bytes\n", k, plural(c.Files, "file"), c.FileBytes)
			writeStatsCounts(w, "  ", c, c.FileBytes)
		}
	}
}

// writeStatsCounts prints the sizes and coverage of c; installed is the
// size of the files they are part of.
func writeStatsCounts(w io.Writer, indent string, c *stats.Counts, installed int64) {
	eh := c.EHFrameBytes + c.EHFrameHdrBytes
	fmt.Fprintf(w, "%s.sframe     %d bytes: %s of .eh_frame %d + .eh_frame_hdr %d = %d, %s of the files\n",
		indent, c.SectionBytes, ratio(uint64(c.SectionBytes), eh), c.EHFrameBytes, c.EHFrameHdrBytes, eh,
		percent(uint64(c.SectionBytes), uint64(installed)))
	fmt.Fprintf(w, "%sunshared    %d bytes with one block of FREs per function (GNU's form): %s of .eh_frame + .eh_frame_hdr, %s of the files\n",
		indent, c.UnsharedBytes, ratio(uint64(c.UnsharedBytes), eh), percent(uint64(c.UnsharedBytes), uint64(installed)))
	b := &c.Breakdown
	fmt.Fprintf(w, "%sbytes       header %d, FDE index %d, FDE attributes %d, FRE start addresses %d, FRE info %d, data words %d, other %d; sharing saved %d, narrowing saved %d\n",
		indent, b.Header, b.FDEIndex, b.FDEAttributes, b.FREStartAddresses, b.FREInfo, b.DataWords, b.Other, b.SharingSaved, b.NarrowingSaved)
	fmt.Fprintf(w, "%sfunctions   %d of %d described by the CFI covered (%s); %d FDEs, %d FREs\n",
		indent, c.CoveredFunctions, c.CFIFunctions, percent(uint64(c.CoveredFunctions), uint64(c.CFIFunctions)), c.FDEs, c.FREs)
}

// isDir reports whether path names a directory (a symbolic link to one
// included, as the walk follows an operand).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// ratio prints a/b with three decimals, or "-".
func ratio(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}
