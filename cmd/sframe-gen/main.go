// Command sframe-gen turns the DWARF call-frame information of ELF files into
// SFrame version 3 sections and writes them into the files.
//
// Usage:
//
//	sframe-gen [flags] FILE            generate (the default command), in place or -o OUT
//	sframe-gen [flags] PATH...         generate for every ELF file of files and directories
//	sframe-gen dump [--json] FILE...   print the .sframe section like objdump --sframe
//	sframe-gen verify [--json] FILE... check the .sframe section against the CFI
//	sframe-gen stats [--json] FILE...  coverage and cost
//	sframe-gen rows [--json] FILE...   print the CFI row tables
//	sframe-gen stack [--json] CORE     walk every thread of a core (or --pid PID) with SFrame
//
// generate.go runs the library's pipeline on one file, batch*.go over a
// tree (sframegen.Walk, Generator.ProcessTree) and prints what it did;
// each other subcommand has its file.
// docs/architecture.md is the map.
//
// Exit status: 0 success, 1 failure, 2 usage error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// Version is the program version printed by --version.
var Version = "0.1.0"

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// cli carries the process environment; subcommands write only through it.
type cli struct {
	stdout, stderr io.Writer
	// temps are the temporary files being written (nil: not tracked); a
	// signal removes them.
	temps *replace.TempFiles
	// tuneRuntime sets the Go runtime to the run (main): its garbage
	// collector to the files (sframegen.Resources.TuneGC), its memory
	// limit to --memory-limit (elfread.MemoryBudget.LimitRuntime).
	tuneRuntime bool
}

// command is one subcommand.
type command struct {
	name  string
	short string
	run   func(c *cli, args []string) int
}

func commands() []command {
	return []command{
		{"dump", "print the .sframe section as objdump --sframe does", (*cli).runDump},
		{"rows", "print the CFI row tables of every FDE", (*cli).runRows},
		{"verify", "check .sframe against the CFI at every address", (*cli).runVerify},
		{"stats", "coverage and size of .sframe (or of a dry run)", (*cli).runStats},
		{"stack", "walk the stacks of a core file or a process with SFrame alone", (*cli).runStack},
	}
}

func main() {
	c := &cli{stdout: os.Stdout, stderr: os.Stderr, temps: new(replace.TempFiles), tuneRuntime: true}
	// SIGINT, SIGTERM, SIGHUP: remove the temporary file being written, so
	// a killed build leaves nothing behind and the input untouched; exit 1.
	// The handler is installed off the run's path (Notify waits 0.3-0.6 ms
	// for a thread of the runtime's); no file is made before it is
	// (TempFiles.WaitFor).
	sigs := make(chan os.Signal, 1)
	ready := make(chan struct{})
	c.temps.WaitFor(ready)
	go func() {
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		close(ready)
		sig := <-sigs
		c.temps.RemoveAll()
		fmt.Fprintf(os.Stderr, "sframe-gen: %v\n", sig)
		os.Exit(exitFailure)
	}()
	os.Exit(c.main(os.Args[1:]))
}

func (c *cli) main(args []string) int {
	if len(args) > 0 {
		if cmd, ok := findCommand(args[0]); ok {
			return cmd.run(c, args[1:])
		}
		if args[0] == "help" && !exists(args[0]) {
			return c.runHelp(args[1:])
		}
	}
	return c.runGenerate(args)
}

// findCommand returns the subcommand called name.
func findCommand(name string) (command, bool) {
	for _, cmd := range commands() {
		if name == cmd.name {
			return cmd, true
		}
	}
	return command{}, false
}

// runHelp implements "sframe-gen help [COMMAND]": the usage of the
// program, or of COMMAND.
func (c *cli) runHelp(args []string) int {
	switch {
	case len(args) == 0 || len(args) == 1 && args[0] == "help":
		return c.runGenerate([]string{"--help"})
	case len(args) > 1:
		return c.fail("", usageError{msg: "help: expected at most one COMMAND"})
	}
	if cmd, ok := findCommand(args[0]); ok {
		return cmd.run(c, []string{"--help"})
	}
	msg := fmt.Sprintf("help: unknown command %q", args[0])
	if near := closestCommand(args[0]); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return c.fail("", usageError{msg: msg})
}

// mistypedCommand returns the usage error for a first operand that names
// no file but looks like a subcommand: a command name given after flags,
// "help", or a word without "." or "/" close to a command name
// (closestCommand). Anything else is nil: the operand is a path.
func mistypedCommand(operand string) error {
	if operand == "" || exists(operand) {
		return nil
	}
	if _, ok := findCommand(operand); ok || operand == "help" {
		return usageError{msg: fmt.Sprintf("%q is a command: it goes before the flags (sframe-gen %s [flags] FILE)", operand, operand)}
	}
	if strings.ContainsAny(operand, "./") {
		return nil // a path (dump.o, ./verify), not a command
	}
	near := closestCommand(operand)
	if near == "" {
		return nil
	}
	return usageError{msg: fmt.Sprintf("unknown command %q, and no such file; did you mean %q? (sframe-gen %s [flags] FILE)", operand, near, near)}
}

// closestCommand returns the command name (or "help") nearest to word: at
// most two letters added, dropped, changed or swapped, or word a
// beginning of the name of at least three letters; "" when none is.
func closestCommand(word string) string {
	word = strings.ToLower(word)
	best, bestDist := "", 3
	names := []string{"help"}
	for _, cmd := range commands() {
		names = append(names, cmd.name)
	}
	for _, name := range names {
		d := editDistance(word, name)
		if len(word) >= 3 && strings.HasPrefix(name, word) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b: the
// number of single-letter insertions, deletions, substitutions and
// transpositions of adjacent letters that turn a into b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// exists reports whether path names anything, a dangling symbolic link
// included.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// usageError is a command-line mistake: exit status 2.
type usageError struct {
	msg     string
	command string // the command whose help to point at ("": sframe-gen --help)
}

func (e usageError) Error() string { return e.msg }

// commandUsage is a mistake on the command line of command: "command:
// msg", pointing at that command's help.
func commandUsage(command, msg string) usageError {
	return usageError{msg: command + ": " + msg, command: command}
}

// fail prints "sframe-gen: FILE: what is wrong" and returns the exit status
// for err: 2 for usage errors, 1 otherwise.
func (c *cli) fail(file string, err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		help := "--help"
		if ue.command != "" {
			help = "help " + ue.command
		}
		fmt.Fprintf(c.stderr, "sframe-gen: %s\nTry 'sframe-gen %s' for more information.\n", ue.msg, help)
		return exitUsage
	}
	if file != "" {
		fmt.Fprintf(c.stderr, "sframe-gen: %s: %v\n", displayName(file), err)
	} else {
		fmt.Fprintf(c.stderr, "sframe-gen: %v\n", err)
	}
	return exitFailure
}
