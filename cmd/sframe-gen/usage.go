package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// helpText is the description of -h/--help, the same in every command.
const helpText = "print this help and exit"

// helpFlag adds -h/--help to fs.
func helpFlag(fs *pflag.FlagSet) *bool {
	return fs.BoolP("help", "h", false, helpText)
}

// setUsage makes fs's usage the help of a command: its synopsis (one or
// more lines, the first after "Usage: "), what it does, and its flags,
// written to w. The help names no file of the source tree: the manual
// is "man sframe-gen".
func setUsage(fs *pflag.FlagSet, w io.Writer, synopsis, description string) {
	fs.Usage = func() {
		fmt.Fprintf(w, "Usage: %s\n\n%s\n\nFlags:\n%s", synopsis, description, fs.FlagUsages())
	}
}
