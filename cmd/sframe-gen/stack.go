package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/unwind"
)

// runStack implements "sframe-gen stack [--json] [--sysroot DIR] CORE" and
// "sframe-gen stack --pid PID": every thread's stack walked with SFrame
// alone (package emit/unwind).
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

// sysrootHint says what to do about files of a process that are not on
// this host.
const sysrootHint = "walk with --sysroot DIR, DIR holding them at those paths (qemu-user's -L directory, or a copy of the other machine's files)"

// stackOfCore walks the threads of the core file at path, what it reads
// charged to meter.
func stackOfCore(path, sysroot string, meter *elfread.Meter) (*stackResult, error) {
	p, closer, err := openCore(path, meter)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	mods, err := coreModules(p, path, sysroot, meter)
	if err != nil {
		return nil, err
	}
	return walkProcess(p, mods)
}

// coreModules returns the modules of the process of the core at path:
// from its NT_FILE mappings, or, without them (qemu's), from the dynamic
// linker's list in its memory.
func coreModules(p *process, path, sysroot string, meter *elfread.Meter) ([]*stackModule, error) {
	if len(p.Mappings) > 0 {
		return modulesFromMappings(p.Mappings, sysroot, meter), nil
	}
	return modulesFromLinkMap(p, sysroot, filepath.Dir(path), meter)
}

// walkProcess walks every thread of p with modules mods.
func walkProcess(p *process, mods []*stackModule) (*stackResult, error) {
	for _, m := range mods {
		checkBuildID(m, p.Mem, p.ABI.ByteOrder())
	}
	var located, missing []*stackModule
	seen := map[string]bool{}
	for _, m := range mods {
		if m.End > m.Start {
			located = append(located, m)
		} else if !seen[m.Name] {
			seen[m.Name] = true
			missing = append(missing, m) // a library not found, its extent unknown
		}
	}
	umods, kept := unwindModules(located)
	w, err := unwind.New(p.ABI, p.Mem, umods)
	if err != nil {
		return nil, err
	}
	res := &stackResult{}
	for _, m := range kept {
		info := moduleInfo{Name: m.Name, Path: m.Path, Start: m.Start, End: m.End, SFrame: m.SFrame != nil}
		if m.NoSFrame != nil {
			info.NoSFrame = m.NoSFrame.Error()
		}
		res.Modules = append(res.Modules, info)
	}
	var notHere []string // files the process maps that are not on this host
	for _, m := range append(kept, missing...) {
		if m.NoSFrame != nil && errors.Is(m.NoSFrame, fs.ErrNotExist) {
			notHere = append(notHere, m.Name)
		}
	}
	for _, m := range missing {
		res.Modules = append(res.Modules, moduleInfo{Name: m.Name, Path: m.Path, NoSFrame: m.NoSFrame.Error()})
	}
	var frames []unwind.Frame
	for _, t := range p.Threads {
		var end unwind.End
		frames, end = w.Walk(&t.Regs, frames[:0])
		ts := threadStack{TID: t.TID, End: endInfo{Reason: end.Reason.String(), Complete: end.Reason.Complete(), Detail: end.String()}}
		for _, f := range frames {
			fi := frameInfo{PC: f.PC, SP: f.SP, Signal: f.Signal}
			if f.Module >= 0 {
				m := kept[f.Module]
				fi.Module = m.Name
				look := f.PC - m.Bias
				if !f.Exact && !f.Signal {
					look-- // inside the call
				}
				if name, off := m.symbolize(look); name != "" {
					fi.Function, fi.Offset = name, f.PC-m.Bias-(look-off)
				}
			}
			ts.Frames = append(ts.Frames, fi)
		}
		if end.Reason == unwind.EndNoSFrame && len(frames) > 0 {
			if m := frames[len(frames)-1].Module; m >= 0 && kept[m].NoSFrame != nil {
				ts.End.Detail += ": " + kept[m].Name + ": " + kept[m].NoSFrame.Error()
				if errors.Is(kept[m].NoSFrame, emit.ErrNoSFrame) {
					p := kept[m].Path
					ts.End.Detail += "; give it SFrame: sframe-gen " + p + " in place, or a patched copy the program loads (sframe-gen --output-dir DIR " + p + ", then LD_LIBRARY_PATH=DIR)"
				}
			}
		}
		if end.Reason == unwind.EndNoModule && len(notHere) > 0 {
			ts.End.Detail += "; files the process maps are not on this host: " + strings.Join(notHere, ", ") + ": " + sysrootHint
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
