package main

import (
	"debug/elf"

	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/emit"
)

// errNoSFrame is returned for a file without a .sframe section.
var errNoSFrame = emit.ErrNoSFrame

// runDump implements "sframe-gen dump [--json] FILE": the .sframe section
// printed as objdump --sframe prints it (from "Contents of the SFrame
// section" on), or as JSON.
func (c *cli) runDump(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen dump", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	help := helpFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of objdump's text")
	setUsage(fs, c.stdout, "sframe-gen dump [--json] FILE",
		"Print the .sframe section of FILE as objdump --sframe does.")
	if err := fs.Parse(args); err != nil {
		return c.fail("", usageError{"dump: " + err.Error()})
	}
	if *help {
		fs.Usage()
		return exitOK
	}
	if fs.NArg() != 1 {
		return c.fail("", usageError{"dump: expected exactly one FILE"})
	}
	file := fs.Arg(0)
	if err := dumpFile(c.stdout, file, *asJSON); err != nil {
		return c.fail(file, err)
	}
	return exitOK
}

// dumpFile prints the .sframe section of the ELF file at path.
func dumpFile(w io.Writer, path string, asJSON bool) error {
	in, _, f, err := openELF(path) // not elf.Open: a FIFO would block, a cut header say "EOF"
	if err != nil {
		return err
	}
	defer in.Close()
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
	if asJSON {
		return emit.DumpJSON(w, s, addr, sec.Name)
	}
	return emit.Dump(w, s, addr, sec.Name)
}
