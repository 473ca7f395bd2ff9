package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// runGenerate is the default command: generate SFrame for FILE.
func (c *cli) runGenerate(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	help := fs.BoolP("help", "h", false, "print this help and exit")
	version := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(c.stdout, "Usage: sframe-gen [flags] FILE\n       sframe-gen COMMAND [flags] FILE\n\nCommands:\n")
		for _, cmd := range commands() {
			fmt.Fprintf(c.stdout, "  %-8s %s\n", cmd.name, cmd.short)
		}
		fmt.Fprintf(c.stdout, "\nFlags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		return c.fail("", usageError{err.Error()})
	}
	if *help {
		fs.Usage()
		return exitOK
	}
	if *version {
		fmt.Fprintf(c.stdout, "sframe-gen %s\n", Version)
		return exitOK
	}
	if fs.NArg() != 1 {
		return c.fail("", usageError{"expected exactly one FILE"})
	}
	return c.fail(fs.Arg(0), fmt.Errorf("generating SFrame is not implemented yet"))
}
