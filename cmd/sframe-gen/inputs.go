package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// reader is what the reading commands (dump, rows, verify, stats) share:
// their flags --help, --json and --memory-limit, and the loop over the
// ELF files their FILEs hold.
type reader struct {
	c            *cli
	name         string
	fs           *pflag.FlagSet
	help, asJSON *bool
	limit        func() (*memoryBudget, error)
	budget       *memoryBudget // parse's
}

// newReader makes the flags of the reading command name, its --json
// flag's help jsonUsage, its help synopsis and description.
func (c *cli) newReader(name, jsonUsage, synopsis, description string) *reader {
	fs := pflag.NewFlagSet("sframe-gen "+name, pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	r := &reader{c: c, name: name, fs: fs, help: helpFlag(fs)}
	r.asJSON = fs.Bool("json", false, jsonUsage)
	r.limit = c.memoryLimitFlag(fs, readMemoryUsage)
	setUsage(fs, c.stdout, synopsis, description)
	return r
}

// parse parses args, then checks the values of the command's own flags
// (each of checks) and --memory-limit: done, with the exit status, when
// the command ends here (a usage error, or --help); missing is the usage
// error without FILE ("": none).
func (r *reader) parse(args []string, missing string, checks ...func() error) (code int, done bool) {
	if err := r.fs.Parse(args); err != nil {
		return r.usage(err)
	}
	if *r.help {
		r.fs.Usage()
		return exitOK, true
	}
	if r.fs.NArg() == 0 && missing != "" {
		return r.usage(errors.New(missing))
	}
	for _, check := range append(checks, func() (err error) { r.budget, err = r.limit(); return err }) {
		if err := check(); err != nil {
			return r.usage(err)
		}
	}
	return 0, false
}

// usage fails the command with the usage error err.
func (r *reader) usage(err error) (int, bool) {
	return r.c.fail("", commandUsage(r.name, err.Error())), true
}

// elfInput is one ELF file a reading command reads: a FILE, or a member
// of the static archive FILE.
type elfInput struct {
	elfread.Object
	// path is the FILE; name is path, or ARCHIVE(MEMBER) as generate
	// names a member; heading is name when the output names the input
	// before its part (a member, or one of several FILEs), else "".
	path, name, heading string
	// meter charges what is read of it to --memory-limit (its headers
	// are charged already), given back when read returns.
	meter *elfread.Meter
}

// eachInput calls read with each FILE, or each ELF member of a static
// archive (elfread.Meter.ObjectsAt). read returns whether it found what
// it reads in the input (false: passed over) and the error that fails it;
// an archive in which it found nothing fails with the message nothing.
// The status is exitFailure when an input or a FILE failed.
func (r *reader) eachInput(nothing string, read func(in elfInput) (bool, error)) int {
	status := exitOK
	for _, path := range r.fs.Args() {
		archive := false
		meter := elfread.NewMeter(r.budget)
		found, err := meter.ObjectsAt(path, func(o elfread.Object) bool {
			archive = archive || o.Member != ""
			in := elfInput{Object: o, path: path, name: o.Name(path), meter: meter}
			if o.Member != "" || r.fs.NArg() > 1 {
				in.heading = in.name
			}
			found, err := true, o.Err
			if err == nil {
				found, err = read(in)
			}
			if found && err != nil {
				status = r.c.fail(in.name, err)
			}
			return found
		})
		meter.Release()
		if err == nil && archive && !found {
			err = errors.New(nothing)
		}
		if err != nil {
			status = r.c.fail(path, err)
		}
	}
	return status
}

// plural is "1 thing" or "N things".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// writeJSON prints v as one indented JSON object (elfread.JSONWriter: C1
// characters escaped).
func writeJSON(w io.Writer, v any) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(elfread.JSONWriter{W: bw})
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return bw.Flush()
}
