package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/emit"
)

// runDump implements "sframe-gen dump [--json] FILE": the .sframe section
// printed as objdump --sframe prints it (from "Contents of the SFrame
// section" on), or as JSON.
func (c *cli) runDump(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen dump", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	help := helpFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of objdump's text")
	budget := c.memoryLimitFlag(fs, readMemoryUsage)
	setUsage(fs, c.stdout, "sframe-gen dump [--json] FILE...",
		"Print the .sframe section of FILE as objdump --sframe does; of a static archive,\n"+
			"of each member, named ARCHIVE(MEMBER); of several FILEs, each after a line naming it.")
	if code, done := c.parseFiles(fs, args, help, "dump"); done {
		return code
	}
	b, err := budget()
	if err != nil {
		return c.fail("", commandUsage("dump", err.Error()))
	}
	status := exitOK
	for _, file := range fs.Args() {
		status = max(status, c.dumpFile(file, fs.NArg() > 1, *asJSON, b))
	}
	return status
}

// dumpFile prints the .sframe section of file (named: after a line naming
// it) and returns the exit status.
func (c *cli) dumpFile(file string, named, asJSON bool, b *memoryBudget) int {
	status := exitOK
	err := readInputs(file, "no member has a .sframe section", b, func(in elfInput) bool {
		in.named = in.member || named
		err := in.err
		if err == nil {
			err = in.meter.ChargeSFrame(in.f, in.size)
		}
		if err == nil {
			err = dumpELF(c.stdout, in, asJSON)
		}
		if in.member && errors.Is(err, emit.ErrNoSFrame) {
			return false // an object without CFI, which generate leaves as it is
		}
		if err != nil {
			status = c.fail(in.name, err)
		}
		return true
	})
	if err != nil {
		return c.fail(file, err)
	}
	return status
}

// dumpELF prints the .sframe section of in: for a member of an archive,
// after a blank line and a line naming it (text), or with a "file" member (JSON).
func dumpELF(w io.Writer, in elfInput, asJSON bool) error {
	f := in.f
	sec, data, err := emit.ReadELFSection(f)
	if err != nil {
		return err
	}
	s, err := emit.Decode(data)
	if err != nil {
		return fmt.Errorf("section %s: %w", sec.Name, err)
	}
	addr := sec.Addr
	if f.Type == elf.ET_REL {
		addr = 0
	}
	switch {
	case asJSON && in.named:
		return emit.DumpJSONFile(w, in.name, s, addr, sec.Name)
	case asJSON:
		return emit.DumpJSON(w, s, addr, sec.Name)
	case in.named:
		fmt.Fprintf(w, "\n%s:\n", in.name)
	}
	return emit.Dump(w, s, addr, sec.Name)
}
