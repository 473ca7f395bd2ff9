package main

import (
	"bufio"
	"errors"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// runRows prints the CFI row table of every FDE (of a static archive: of
// each member with CFI; cfi.WriteRows): with --json one JSON object per
// FDE and line, else a readable text form. Entry errors go to stderr and
// make the exit status 1; the other FDEs are still printed.
func (c *cli) runRows(args []string) int {
	r := c.newReader("rows", "print one JSON object per FDE and line", "sframe-gen rows [--json] [--eh-frame|--debug-frame] FILE...",
		`Print the CFI row table of every FDE of FILE: the CFA and register rules from
each address on, as the call-frame information describes them; of a static
archive, of each member with CFI, after a line naming it ARCHIVE(MEMBER); of
several FILEs, each after a line naming it.`)
	source := cfiSourceFlags(r.fs, "read")
	var src cfi.Source
	if code, done := r.parse(args, "expected a FILE", func() (err error) { src, err = source(); return err }); done {
		return code
	}
	status := exitOK
	read := r.eachInput("no member has call-frame information", func(in elfInput) (bool, error) {
		err := in.meter.ChargeCFI(in.File, src)
		var frames *cfi.Frames
		if err == nil {
			frames, err = cfi.Read(in.File, src)
		}
		if err != nil {
			return in.Member == "" || !errors.Is(err, cfi.ErrNoCFI), err // a member without CFI is passed over
		}
		w := bufio.NewWriter(c.stdout)
		err = cfi.WriteRows(w, frames, in.heading, *r.asJSON, func(err error) {
			w.Flush()
			status = c.fail(in.name, err)
		})
		if err == nil {
			err = w.Flush()
		}
		return true, err
	})
	return max(read, status)
}
