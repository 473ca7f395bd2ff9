package main

import (
	"encoding/json"
	"strconv"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
)

// stackOf walks the threads of the running process pid (each stopped
// meanwhile) or, pid 0, of the core file at path, charged to meter.
func stackOf(pid int, path, sysroot string, meter *elfread.Meter) (*target.Report, error) {
	opts := target.Options{Sysroot: sysroot, Meter: meter}
	open := func() (*target.Process, error) { return target.OpenCore(path, opts) }
	if pid != 0 {
		open = func() (*target.Process, error) { return target.Attach(pid, opts) }
	}
	p, err := open()
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Report()
}

// runStack implements "sframe-gen stack [--json] [--sysroot DIR] CORE" and
// "sframe-gen stack --pid PID": every thread's stack walked with SFrame
// alone (target.Process.Report).
func (c *cli) runStack(args []string) int {
	r := c.newReader("stack", "print JSON", "sframe-gen stack [--json] [--sysroot DIR] CORE\n       sframe-gen stack [--json] --pid PID",
		`Walk the stack of every thread of an ELF core file or a running process with
the .sframe sections of the files it maps, and print the frames as gdb's bt does.`)
	sysroot := r.fs.String("sysroot", "", "read the files the process maps under `DIR` (cores of cross-built programs)")
	pid := r.fs.Int("pid", 0, "walk the threads of the running process `PID` (ptrace; it continues afterwards)")
	if code, done := r.parse(args, ""); done {
		return code
	}
	// The core's headers and notes and every module's headers, .sframe
	// and symbols are charged before they are read, and held for the walk.
	meter := elfread.NewMeter(r.budget)
	defer meter.Release()
	name := "pid " + strconv.Itoa(*pid)
	switch {
	case *pid == 0 && r.fs.NArg() == 1:
		name = r.fs.Arg(0)
	case *pid == 0 || r.fs.NArg() != 0:
		return c.fail("", commandUsage("stack", "expected exactly one CORE, or --pid PID"))
	}
	st, err := stackOf(*pid, name, *sysroot, meter)
	if err != nil {
		return c.fail(name, err)
	}
	if *r.asJSON {
		e := json.NewEncoder(c.stdout)
		e.SetIndent("", "  ")
		err = e.Encode(st)
	} else {
		err = st.WriteText(c.stdout)
	}
	if err != nil {
		return c.fail("", err)
	}
	return exitOK
}
