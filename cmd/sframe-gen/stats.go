package main

import (
	"bufio"
	"os"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/stats"
)

// runStats implements "sframe-gen stats [--json] [--dry-run] FILE":
// coverage and cost of the .sframe section, or, for a file without one (or
// with --dry-run), of the section generating would write; for a static
// archive, of each member generate reads (Generator.ObjectStats). With
// several PATHs or a directory, the tree form (runStatsTree).
func (c *cli) runStats(args []string) int {
	r := c.newReader("stats", "print the statistics as one JSON object", "sframe-gen stats [--json] [--dry-run] [GENERATE-OPTIONS] FILE\n  or:  sframe-gen stats [--json] [--dry-run] [-j N] [GENERATE-OPTIONS] PATH...",
		`Coverage and cost of FILE's .sframe section (or, without one, of the section
generating would write with the same options: nothing is written); of a static
archive, of each member, named ARCHIVE(MEMBER).
With several PATHs or a directory (walked as generate walks it): a line per
file (--json: an object per file), then the total of all of them.`)
	fs := r.fs
	dry := fs.Bool("dry-run", false, "describe what generating would write even when FILE has a .sframe section")
	source := cfiSourceFlags(fs, "read")
	gas := fs.Bool("gas-compat", false, "in a dry run: what generating with --gas-compat writes")
	share := shareFlags(fs)
	merge := mergeFlag(fs)
	sframeVer := sframeVersionFlags(fs)
	jobs := fs.IntP("jobs", "j", 0, "with several PATHs or a directory: files read at once (default: the CPUs available)")
	var o generateOptions
	if code, done := r.parse(args, "expected a FILE, or PATHs",
		func() (err error) { o.gas = *gas; o.source, err = source(); return err },
		func() (err error) { o.version, err = sframeVer(); return err },
		func() (err error) { o.share, err = share(o.gas); return err },
		func() (err error) { o.merge, err = merge(o.gas); return err }); done {
		return code
	}
	g, err := sframegen.NewGenerator(o.library(), sframegen.Resources{})
	if err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if fs.NArg() > 1 || isDir(fs.Arg(0)) {
		return c.runStatsTree(g, fs.Args(), r.budget, *dry, *r.asJSON, *jobs)
	}
	return r.eachInput("no member has a .sframe section or call-frame information", func(in elfInput) (bool, error) {
		if in.Member != "" && emit.FindSection(in.File) == nil && !sframegen.Generates(in.File) {
			return false, nil // generate leaves such a member as it is
		}
		st, err := g.ObjectStats(in.path, &in.Object, in.meter, *dry)
		switch {
		case err != nil:
		case *r.asJSON:
			err = writeJSON(c.stdout, st)
		default:
			err = st.WriteText(c.stdout, displayName(st.File))
		}
		return true, err
	})
}

// runStatsTree prints the statistics of every ELF file and archive member
// under paths (Generator.TreeStats), then their total; exit status 1 when
// a file failed. The paths are walked as generate walks a tree in place,
// but a killed run's temporary names are passed over, not resumed.
func (c *cli) runStatsTree(g *sframegen.Generator, paths []string, b *memoryBudget, dry, asJSON bool, workers int) int {
	tree, err := sframegen.Walk(paths, sframegen.WalkOptions{})
	if err != nil {
		return c.fail("", err)
	}
	defer tree.Close()
	if workers < 1 {
		workers = defaultJobs()
	}
	w := bufio.NewWriter(c.stdout)
	status := exitOK
	total := g.TreeStats(tree, b, dry, workers, func(r *stats.File) {
		if len(r.Failed) > 0 {
			w.Flush()
		}
		for _, f := range r.Failed {
			status = c.fail(f.Name, f.Err)
		}
		for _, st := range r.Objects {
			if asJSON {
				writeJSON(w, st)
			} else {
				st.WriteLine(w, displayName(st.File))
			}
		}
	})
	if asJSON {
		writeJSON(w, struct {
			Total *stats.Total `json:"total"`
		}{total})
	} else {
		total.WriteText(w)
	}
	if err := w.Flush(); err != nil {
		return c.fail("", err)
	}
	return status
}

// isDir reports whether path names a directory (a symbolic link to one
// included, as the walk follows an operand).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
