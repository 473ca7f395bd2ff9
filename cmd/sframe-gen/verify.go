package main

import (
	"errors"
	"fmt"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
	"github.com/sframe-gen/sframe-gen/emit/verify"
)

// runVerify implements "sframe-gen verify [--json] [-v] FILE": the .sframe
// section checked against the file's CFI at every address and against the
// rules of its strictest consumers (docs/verify.md); for a static archive,
// of each member generate gives one. Exit status 0 when clean, 1 when any
// problem was found, 2 when the file (or a member) cannot be checked.
func (c *cli) runVerify(args []string) int {
	r := c.newReader("verify", "print the report as one JSON object", "sframe-gen verify [--json] [-v] FILE...",
		`Check the .sframe section of FILE against its call-frame information at every
address, and against the rules of the Linux kernel, libsframe and GNU ld.
A static archive is checked member by member, each named ARCHIVE(MEMBER).
Exit status: 0 clean, 1 problems found, 2 FILE cannot be checked.`)
	verbose := r.fs.BoolP("verbose", "v", false, "also list the functions the CFI describes and the section does not cover")
	source := cfiSourceFlags(r.fs, "compare with")
	var opt verify.Options
	if code, done := r.parse(args, "expected a FILE", func() (err error) { opt.Source, err = source(); return err }); done {
		return code
	}
	what := "CFI" // what the section is checked against
	if opt.Source != cfi.Auto {
		what = opt.Source.String()
	}
	problems := false
	status := r.eachInput("no member has a .sframe section", func(in elfInput) (bool, error) {
		err := in.meter.ChargeVerify(in.File, in.Size, opt.Source)
		var rep *verify.Report
		if err == nil {
			rep, err = verify.File(in.File, opt)
		}
		switch {
		case in.Member != "" && errors.Is(err, emit.ErrNoSFrame) && !sframegen.Generates(in.File):
			return false, nil // a member generate leaves as it is
		case errors.Is(err, cfi.ErrNoCFI):
			return true, fmt.Errorf("cannot be checked: %s has no %s to check its .sframe against", in.name, what)
		case err == nil && *r.asJSON: // the functions named by their symbols
			err = writeJSON(c.stdout, rep.JSON(in.name, target.NewSymbols(in.File).Name))
		case err == nil:
			err = rep.WriteText(c.stdout, "sframe-gen: "+displayName(in.name)+": ", target.NewSymbols(in.File).Name, *verbose)
		}
		problems = problems || err == nil && len(rep.Problems) > 0
		return true, err
	})
	switch {
	case problems:
		return exitFailure
	case status != exitOK:
		return exitUsage // a FILE or a member cannot be checked
	}
	return exitOK
}
