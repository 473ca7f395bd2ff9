package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// runRows prints the CFI row table of every FDE (of a static archive: of
// each member with CFI): with --json one JSON object per FDE and line,
// else a readable text form. Entry errors go to stderr and make the exit
// status 1; the other FDEs are still printed.
func (c *cli) runRows(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen rows", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	help := helpFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per FDE and line")
	source := cfiSourceFlags(fs, "read")
	budget := c.memoryLimitFlag(fs, readMemoryUsage)
	setUsage(fs, c.stdout, "sframe-gen rows [--json] [--eh-frame|--debug-frame] FILE...",
		"Print the CFI row table of every FDE of FILE: the CFA and register rules from\n"+
			"each address on, as the call-frame information describes them; of a static\n"+
			"archive, of each member with CFI, after a line naming it ARCHIVE(MEMBER); of\n"+
			"several FILEs, each after a line naming it.")
	if code, done := c.parseFiles(fs, args, help, "rows"); done {
		return code
	}
	src, err := source()
	if err != nil {
		return c.fail("", commandUsage("rows", err.Error()))
	}
	b, err := budget()
	if err != nil {
		return c.fail("", commandUsage("rows", err.Error()))
	}
	status := exitOK
	for _, file := range fs.Args() {
		status = max(status, c.rowsFile(file, src, fs.NArg() > 1, *asJSON, b))
	}
	return status
}

// rowsFile prints the rows of file (named: after a line naming it) and
// returns the exit status.
func (c *cli) rowsFile(file string, src cfi.Source, named, asJSON bool, b *memoryBudget) int {
	status := exitOK
	err := readInputs(file, "no member has call-frame information", b, func(in elfInput) bool {
		in.named = in.member || named
		if in.err != nil {
			status = c.fail(in.name, in.err)
			return true
		}
		if err := in.meter.ChargeCFI(in.f, src); err != nil {
			status = c.fail(in.name, err)
			return true
		}
		frames, err := cfi.Read(in.f, src)
		if in.member && errors.Is(err, cfi.ErrNoCFI) {
			return false // an object without CFI
		}
		if err != nil {
			status = c.fail(in.name, err)
			return true
		}
		w := bufio.NewWriter(c.stdout)
		if st := printRows(w, c.stderr, in, frames, asJSON); st != exitOK {
			status = st
		}
		if err := w.Flush(); err != nil {
			status = c.fail(in.name, err)
		}
		return true
	})
	if err != nil {
		return c.fail(file, err)
	}
	return status
}

// printRows prints every FDE's rows and, in section order with them, the
// entry errors. The rows of an archive's member follow a line naming it
// (text), or carry a "file" member (JSON).
func printRows(w *bufio.Writer, stderr io.Writer, in elfInput, frames *cfi.Frames, asJSON bool) int {
	status := exitOK
	report := func(err error) {
		w.Flush()
		fmt.Fprintf(stderr, "sframe-gen: %s: %v\n", displayName(in.name), err)
		status = exitFailure
	}
	var jsonFile []byte // `"file":"ARCHIVE(MEMBER)",` in JSON lines
	switch {
	case in.named && asJSON:
		name, _ := json.Marshal(in.name) // a string always marshals
		jsonFile = append(append([]byte(`"file":`), name...), ',')
	case in.named:
		fmt.Fprintf(w, "%s:\n", in.name)
	}
	errs := frames.Errors
	var it cfi.RowIterator
	var buf []byte
	for _, fde := range frames.FDEs {
		for len(errs) > 0 && errs[0].Offset < fde.Offset {
			report(errs[0])
			errs = errs[1:]
		}
		var err error
		if asJSON {
			buf, err = cfi.AppendRowsJSON(buf[:0], frames, fde, &it, jsonFile)
		} else {
			buf, err = cfi.AppendRowsText(buf[:0], frames, fde, &it)
		}
		w.Write(buf)
		if err != nil {
			report(err)
		}
	}
	for _, e := range errs {
		report(e)
	}
	return status
}
