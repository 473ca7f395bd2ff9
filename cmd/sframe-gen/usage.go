package main

import (
	"fmt"
	"io"
	"strings"

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

// setGenerateUsage makes fs's usage the help of the default command, with
// the list of the other commands.
func setGenerateUsage(fs *pflag.FlagSet, w io.Writer) {
	var cmds strings.Builder
	for _, cmd := range commands() {
		fmt.Fprintf(&cmds, "\n  %-8s %s", cmd.name, cmd.short)
	}
	fmt.Fprintf(&cmds, "\n  %-8s %s", "help", "print this help, or with COMMAND that command's")
	setUsage(fs, w, "sframe-gen [flags] PATH...\n       sframe-gen COMMAND [flags] FILE\n       sframe-gen help [COMMAND]",
		"Generate an SFrame section from FILE's call-frame information and write it into FILE\n"+
			"(or OUT): .sframe + .rela.sframe in relocatable objects, .sframe with PT_GNU_SFRAME in\n"+
			"executables and shared libraries. Directories are walked; files that are not\n"+
			"ELF are left alone. The manual: man sframe-gen.\n\nCommands:"+cmds.String())
}
