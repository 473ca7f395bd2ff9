package main

import (
	"errors"

	"github.com/sframe-gen/sframe-gen/emit"
)

// runDump implements "sframe-gen dump [--json] FILE": the .sframe section
// printed as objdump --sframe prints it (from "Contents of the SFrame
// section" on), or as JSON (emit.DumpELF).
func (c *cli) runDump(args []string) int {
	r := c.newReader("dump", "print JSON instead of objdump's text", "sframe-gen dump [--json] FILE...",
		`Print the .sframe section of FILE as objdump --sframe does; of a static archive,
of each member, named ARCHIVE(MEMBER); of several FILEs, each after a line naming it.`)
	if code, done := r.parse(args, "expected a FILE"); done {
		return code
	}
	return r.eachInput("no member has a .sframe section", func(in elfInput) (bool, error) {
		err := in.meter.ChargeSFrame(in.File, in.Size)
		if err == nil {
			err = emit.DumpELF(c.stdout, in.File, in.heading, *r.asJSON)
		}
		// A member without .sframe is an object without CFI, which
		// generate leaves as it is.
		return in.Member == "" || !errors.Is(err, emit.ErrNoSFrame), err
	})
}
