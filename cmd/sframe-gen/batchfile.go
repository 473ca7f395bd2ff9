package main

import (
	"cmp"
	"fmt"
	"io/fs"

	sframegen "github.com/sframe-gen/sframe-gen"
)

// status is what the batch did with one file.
type status = sframegen.Status

const (
	statusPatched  = sframegen.Patched  // a new SFrame section written
	statusUpToDate = sframegen.UpToDate // its SFrame already what we would write: not touched
	statusNoCFI    = sframegen.NoCFI    // an ELF file without call-frame information: left as it is
	statusSkipped  = sframegen.Skipped  // not ELF, another architecture, a symbolic link: left alone
	statusFailed   = sframegen.Failed   // an error: left as it was
)

// fileResult is the outcome of one path of the batch: what the library
// did (its Status, Kind, Arch, FDEs and Reason; Failed with the message
// when describeError makes it one) and what processing it printed.
type fileResult struct {
	out  sframegen.Outcome
	msgs []byte // what processing the file printed (-v, --strict), in order
}

// treeResult prints what the library did with the path f of the batch
// (out and err: sframegen.TreeOptions.Done's) into the result's own
// buffer, printed in the order of the walk.
func (c *cli) treeResult(f *sframegen.TreeFile, o generateOptions, out *sframegen.Outcome, err error) fileResult {
	r := fileResult{out: sframegen.Outcome{Status: out.Status, Kind: out.Kind, Arch: out.Arch, FDEs: out.FDEs, Reason: out.Reason}}
	switch {
	case f.Err != nil:
		r.msgs = fmt.Appendf(r.msgs, "sframe-gen: %s: %v\n", displayName(f.Path), err)
	case f.Mode&fs.ModeSymlink != 0 && err != nil:
		r.msgs = fmt.Appendf(r.msgs, "sframe-gen: %s: %v\n", displayName(f.Output), err)
	case f.Regular():
		r.msgs = out.AppendMessages(r.msgs, f.Path, cmp.Or(f.Output, f.Path), o.verbose, o.strict, err)
		if err = describeError(err, o, f.Output, f.OutputLinks); err != nil {
			r.out = sframegen.Outcome{Status: statusFailed, Kind: out.Kind, Arch: out.Arch, Reason: err.Error()}
			r.msgs = fmt.Appendf(r.msgs, "sframe-gen: %s: %s\n", displayName(f.Path), r.out.Reason)
		}
	}
	return r
}
