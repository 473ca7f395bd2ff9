package target

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Report is the walk of every thread of a process in the form
// "sframe-gen stack --json" prints (docs/stack.md): plain values, the
// frames' modules by name.
type Report struct {
	Threads []ThreadReport `json:"threads"`
	Modules []ModuleReport `json:"modules"`
}

// ThreadReport is one thread's walk.
type ThreadReport struct {
	TID    int           `json:"tid"`
	Frames []FrameReport `json:"frames"`
	End    EndReport     `json:"end"`
}

// FrameReport is one frame: Frame, its module named.
type FrameReport struct {
	PC       uint64 `json:"pc"`
	SP       uint64 `json:"sp"`
	Function string `json:"function,omitempty"`
	Offset   uint64 `json:"offset,omitempty"`
	Module   string `json:"module,omitempty"`
	Signal   bool   `json:"signal,omitempty"`
}

// EndReport says why a walk ended: the reason (unwind.Reason's name),
// whether it is the end of a complete walk, and Stack.Detail.
type EndReport struct {
	Reason   string `json:"reason"`
	Complete bool   `json:"complete"`
	Detail   string `json:"detail"`
}

// ModuleReport is one module and whether it has SFrame (NoSFrame: why
// not).
type ModuleReport struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Start    uint64 `json:"start"`
	End      uint64 `json:"end"`
	SFrame   bool   `json:"sframe"`
	NoSFrame string `json:"no_sframe,omitempty"`
}

// Report walks every thread of p (Walk) and returns the walks with p's
// modules.
func (p *Process) Report() (*Report, error) {
	stacks, err := p.Walk()
	if err != nil {
		return nil, err
	}
	r := &Report{}
	for _, m := range p.Modules {
		mr := ModuleReport{Name: m.Name, Path: m.Path, Start: m.Start, End: m.End, SFrame: m.SFrame != nil}
		if m.NoSFrame != nil {
			mr.NoSFrame = m.NoSFrame.Error()
		}
		r.Modules = append(r.Modules, mr)
	}
	for _, st := range stacks {
		tr := ThreadReport{TID: st.TID, End: EndReport{Reason: st.End.Reason.String(), Complete: st.End.Reason.Complete(), Detail: st.Detail}}
		for _, f := range st.Frames {
			tr.Frames = append(tr.Frames, FrameReport{PC: f.PC, SP: f.SP, Function: f.Function, Offset: f.Offset, Module: f.Module.String(), Signal: f.Signal})
		}
		r.Threads = append(r.Threads, tr)
	}
	return r, nil
}

// WriteText writes r as "sframe-gen stack" prints it, as gdb's bt and
// eu-stack do: per thread a line naming it, a line per frame (number, PC,
// function+offset or ??, module), and why the walk ended. The error is
// w's.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i, t := range r.Threads {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		fmt.Fprintf(bw, "TID %d:\n", t.TID)
		for n, f := range t.Frames {
			fn := "??"
			if f.Function != "" {
				fn = f.Function
				if f.Offset != 0 {
					fn += "+0x" + strconv.FormatUint(f.Offset, 16)
				}
			}
			if f.Signal {
				fn = "<signal handler called> " + fn
			}
			mod := ""
			if f.Module != "" {
				mod = " (" + f.Module + ")"
			}
			fmt.Fprintf(bw, "#%-2d 0x%016x %s%s\n", n, f.PC, fn, mod)
		}
		fmt.Fprintf(bw, "    end: %s\n", t.End.Detail)
	}
	return bw.Flush()
}
