package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
)

// runStack implements "sframe-gen stack [--json] [--sysroot DIR] CORE" and
// "sframe-gen stack --pid PID": every thread's stack walked with SFrame
// alone (packages emit/unwind/target and emit/unwind).
func (c *cli) runStack(args []string) int {
	fs := pflag.NewFlagSet("stack", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print JSON")
	sysroot := fs.String("sysroot", "", "read the files the process maps under `DIR` (cores of cross-built programs)")
	pid := fs.Int("pid", 0, "walk the threads of the running process `PID` (ptrace; it continues afterwards)")
	help := fs.BoolP("help", "h", false, "print this help and exit")
	budget := c.memoryLimitFlag(fs, readMemoryUsage)
	if err := fs.Parse(args); err != nil {
		return c.fail("", commandUsage("stack", err.Error()))
	}
	if *help {
		setUsage(fs, c.stdout, "sframe-gen stack [--json] [--sysroot DIR] CORE\n       sframe-gen stack [--json] --pid PID",
			"Walk the stack of every thread of an ELF core file or a running process with\nthe .sframe sections of the files it maps, and print the frames as gdb's bt does.")
		fs.Usage()
		return exitOK
	}
	b, err := budget()
	if err != nil {
		return c.fail("", commandUsage("stack", err.Error()))
	}
	// The core's headers and notes and every module's headers, .sframe
	// and symbols are charged before they are read, and held for the walk.
	meter := elfread.NewMeter(b)
	defer meter.Release()
	var (
		st   *stackResult
		name string
	)
	switch {
	case *pid != 0 && fs.NArg() == 0:
		name = "pid " + strconv.Itoa(*pid)
		st, err = stackOfPID(*pid, *sysroot, meter)
	case *pid == 0 && fs.NArg() == 1:
		name = fs.Arg(0)
		st, err = stackOfCore(name, *sysroot, meter)
	default:
		return c.fail("", commandUsage("stack", "expected exactly one CORE, or --pid PID"))
	}
	if err != nil {
		return c.fail(name, err)
	}
	if *asJSON {
		err = st.writeJSON(c.stdout)
	} else {
		err = st.writeText(c.stdout)
	}
	if err != nil {
		return c.fail("", err)
	}
	return exitOK
}

// stackResult is the walk of every thread of a process.
type stackResult struct {
	Threads []threadStack `json:"threads"`
	Modules []moduleInfo  `json:"modules"`
}

// threadStack is one thread's walk.
type threadStack struct {
	TID    int         `json:"tid"`
	Frames []frameInfo `json:"frames"`
	End    endInfo     `json:"end"`
}

// frameInfo is one frame as printed.
type frameInfo struct {
	PC       uint64 `json:"pc"`
	SP       uint64 `json:"sp"`
	Function string `json:"function,omitempty"`
	Offset   uint64 `json:"offset,omitempty"`
	Module   string `json:"module,omitempty"`
	Signal   bool   `json:"signal,omitempty"`
}

// endInfo says why a walk ended.
type endInfo struct {
	Reason   string `json:"reason"`
	Complete bool   `json:"complete"`
	Detail   string `json:"detail"`
}

// moduleInfo is one module and whether it has SFrame.
type moduleInfo struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Start    uint64 `json:"start"`
	End      uint64 `json:"end"`
	SFrame   bool   `json:"sframe"`
	NoSFrame string `json:"no_sframe,omitempty"`
}

// stackMeter charges what package target reads to a command's Meter.
type stackMeter struct{ *elfread.Meter }

// ChargeNotes charges a core's notes of size bytes: the bytes and what
// is read from them.
func (m stackMeter) ChargeNotes(size int64) error {
	return m.Charge(elfread.Cost{Bytes: 2 * size, What: fmt.Sprintf("notes of %s", elfread.FormatSize(size))})
}

// stackOfCore walks the threads of the core file at path, what it reads
// charged to meter.
func stackOfCore(path, sysroot string, meter *elfread.Meter) (*stackResult, error) {
	p, err := target.OpenCore(path, target.Options{Sysroot: sysroot, Meter: stackMeter{meter}})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return stackOf(p)
}

// stackOfPID walks the threads of the running process pid, each stopped
// meanwhile.
func stackOfPID(pid int, sysroot string, meter *elfread.Meter) (*stackResult, error) {
	p, err := target.Attach(pid, target.Options{Sysroot: sysroot, Meter: stackMeter{meter}})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return stackOf(p)
}

// stackOf walks every thread of p.
func stackOf(p *target.Process) (*stackResult, error) {
	stacks, err := p.Walk()
	if err != nil {
		return nil, err
	}
	res := &stackResult{}
	for _, m := range p.Modules {
		info := moduleInfo{Name: m.Name, Path: m.Path, Start: m.Start, End: m.End, SFrame: m.SFrame != nil}
		if m.NoSFrame != nil {
			info.NoSFrame = m.NoSFrame.Error()
		}
		res.Modules = append(res.Modules, info)
	}
	for _, st := range stacks {
		ts := threadStack{TID: st.TID, End: endInfo{Reason: st.End.Reason.String(), Complete: st.End.Reason.Complete(), Detail: st.Detail}}
		for _, f := range st.Frames {
			fi := frameInfo{PC: f.PC, SP: f.SP, Function: f.Function, Offset: f.Offset, Signal: f.Signal}
			if f.Module != nil {
				fi.Module = f.Module.Name
			}
			ts.Frames = append(ts.Frames, fi)
		}
		res.Threads = append(res.Threads, ts)
	}
	return res, nil
}

// writeText prints the stacks as gdb's bt and eu-stack do.
func (r *stackResult) writeText(w io.Writer) error {
	for i, t := range r.Threads {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "TID %d:\n", t.TID)
		for n, f := range t.Frames {
			fn := "??"
			if f.Function != "" {
				fn = f.Function
				if f.Offset != 0 {
					fn += "+" + "0x" + strconv.FormatUint(f.Offset, 16)
				}
			}
			if f.Signal {
				fn = "<signal handler called> " + fn
			}
			mod := ""
			if f.Module != "" {
				mod = " (" + f.Module + ")"
			}
			fmt.Fprintf(w, "#%-2d 0x%016x %s%s\n", n, f.PC, fn, mod)
		}
		fmt.Fprintf(w, "    end: %s\n", t.End.Detail)
	}
	return nil
}

// writeJSON prints the stacks as one JSON object.
func (r *stackResult) writeJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}
