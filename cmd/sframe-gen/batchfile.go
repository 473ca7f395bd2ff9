package main

import (
	"bytes"
	"fmt"

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

// fileResult is the outcome of one job.
type fileResult struct {
	status status
	kind   string // executable, shared-library, object, archive, ...
	arch   string
	fdes   int    // functions with an SFrame FDE in the file (patched, up to date)
	reason string // why it was skipped, or the error
	msgs   []byte // what processing the file printed (-v, --strict), in order
}

// processFile runs the library's pipeline (sframegen.Generator.Process)
// on one regular file of the batch, found by the walk, printing only into
// its own buffer. ro gives how files are replaced (KeepTimes, and the
// Written and DirSynced hooks of the batch's workers); the job adds its
// links.
func (c *cli) processFile(g *sframegen.Generator, j *job, o generateOptions, ro sframegen.ReplaceOptions) fileResult {
	var r fileResult
	var msgs bytes.Buffer
	fc := &cli{stdout: c.stdout, stderr: &msgs, temps: c.temps}
	out, err := fc.processJob(g, j, o, ro)
	switch {
	case err == nil && j.operand && out.Status == statusSkipped:
		// A file the user named gets no SFrame: an error, as it is when
		// named alone, not passed over as the files a walk finds.
		r = fileResult{status: statusFailed, kind: out.Kind, arch: out.Arch, reason: out.Reason}
		if j.out != "" {
			r.reason += " (copied as it is)"
		}
		fmt.Fprintf(&msgs, "sframe-gen: %s: %s\n", displayName(j.path), r.reason)
	case err == nil:
		r = fileResult{status: out.Status, kind: out.Kind, arch: out.Arch, fdes: out.FDEs, reason: out.Reason}
	default:
		r = fileResult{status: statusFailed, kind: out.Kind, arch: out.Arch, reason: err.Error()}
		fmt.Fprintf(&msgs, "sframe-gen: %s: %s\n", displayName(j.path), r.reason)
	}
	r.msgs = msgs.Bytes()
	return r
}

// processJob opens the places of j (the file, its other names, its
// output and the output's other names, each below the directory the walk
// held open, never through a symbolic link), runs Process on them and
// prints what it found and did.
func (c *cli) processJob(g *sframegen.Generator, j *job, o generateOptions, ro sframegen.ReplaceOptions) (sframegen.Outcome, error) {
	at, err := j.root.Place(j.rel)
	if err != nil {
		return sframegen.Outcome{}, unwrapPath(err)
	}
	defer at.Dir.Close()
	job := sframegen.Job{In: at, Seen: j.id, Replace: ro}
	if j.out == "" {
		job.Replace.InPlace = j.outside
		for i, rel := range j.linkRels {
			l, err := j.root.Place(rel)
			if err != nil {
				return sframegen.Outcome{}, fmt.Errorf("%s: %w", j.links[i], unwrapPath(err))
			}
			defer l.Dir.Close()
			job.Replace.Links = append(job.Replace.Links, l)
		}
	} else {
		if job.Out, err = j.outRoot.Place(j.outRel); err != nil {
			return sframegen.Outcome{}, fmt.Errorf("writing %s: %w", displayName(j.out), unwrapPath(err))
		}
		defer job.Out.Dir.Close()
		for i, rel := range j.outLinkRels {
			l, err := j.outRoot.Place(rel)
			if err != nil {
				return sframegen.Outcome{}, fmt.Errorf("linking %s: %w", j.outLinks[i], unwrapPath(err))
			}
			defer l.Dir.Close()
			job.OutLinks = append(job.OutLinks, l)
		}
	}
	out, err := g.Process(job)
	dst := j.path
	if j.out != "" {
		dst = j.out
	}
	c.printOutcome(j.path, dst, o, &out, err)
	return out, describeError(err, o, j.out, j.outLinks)
}
