package main

import (
	"bytes"
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

// fileResult is the outcome of one path of the batch.
type fileResult struct {
	status status
	kind   string // executable, shared-library, object, archive, ...
	arch   string
	fdes   int    // functions with an SFrame FDE in the file (patched, up to date)
	reason string // why it was skipped, or the error
	msgs   []byte // what processing the file printed (-v, --strict), in order
}

// treeResult prints what the library did with the path f of the batch
// (out and err: sframegen.TreeOptions.Done's) into the result's own
// buffer, printed in the order of the walk.
func (c *cli) treeResult(f *sframegen.TreeFile, o generateOptions, out *sframegen.Outcome, err error) fileResult {
	var msgs bytes.Buffer
	r := fileResult{status: out.Status, kind: out.Kind, arch: out.Arch, fdes: out.FDEs, reason: out.Reason}
	switch {
	case f.Err != nil:
		fmt.Fprintf(&msgs, "sframe-gen: %s: %v\n", displayName(f.Path), err)
	case f.Mode&fs.ModeSymlink != 0 && err != nil:
		fmt.Fprintf(&msgs, "sframe-gen: %s: %v\n", displayName(f.Output), err)
	case f.Regular():
		fc := &cli{stdout: c.stdout, stderr: &msgs, temps: c.temps}
		dst := f.Path
		if f.Output != "" {
			dst = f.Output
		}
		fc.printOutcome(f.Path, dst, o, out, err)
		if err = describeError(err, o, f.Output, f.OutputLinks); err != nil {
			r = fileResult{status: statusFailed, kind: out.Kind, arch: out.Arch, reason: err.Error()}
			fmt.Fprintf(&msgs, "sframe-gen: %s: %s\n", displayName(f.Path), r.reason)
		}
	}
	r.msgs = msgs.Bytes()
	return r
}
