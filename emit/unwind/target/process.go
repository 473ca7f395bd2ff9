package target

import (
	"cmp"
	"debug/elf"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/unwind"
)

// Options says where the files a process maps are and what memory reading
// them may take.
type Options struct {
	// Sysroot, when set, is looked in first for the files the process
	// maps, at their paths (qemu-user's -L directory, or a copy of the
	// other machine's files for a core of a cross-built program).
	Sysroot string
	// Meter, when set, is charged for what is read before it is read
	// (elfread.Meter is one); nil: no limit.
	Meter Meter
}

// A Meter charges the memory that reading a process's files takes,
// before it is taken; an error stops the read.
type Meter interface {
	// ReadELF reads the ELF headers of r (size bytes), charged; a file
	// that does not start with the ELF magic is ErrNotELF.
	ReadELF(r io.ReaderAt, size int64) (*elf.File, error)
	// ChargeNotes charges reading a core's notes of size bytes.
	ChargeNotes(size int64) error
	// ChargeSFrame and ChargeNames charge reading f's .sframe section
	// and NewSymbols(f) (f being a file of size bytes).
	ChargeSFrame(f *elf.File, size int64) error
	ChargeNames(f *elf.File, size int64) error
	// Held is what is charged so far; ReleaseTo gives back what was
	// charged after Held returned mark.
	Held() int64
	ReleaseTo(mark int64)
}

// ErrNotELF is the error of a file that does not start with the ELF
// magic: elfread.ErrNotELF, the one sentinel for it.
var ErrNotELF = elfread.ErrNotELF

func (o Options) meter() Meter {
	if o.Meter == nil {
		return noLimit{}
	}
	return o.Meter
}

// noLimit is the Meter of Options without one.
type noLimit struct{}

func (noLimit) ReadELF(r io.ReaderAt, size int64) (*elf.File, error) {
	var magic [len(elf.ELFMAG)]byte
	if n, _ := r.ReadAt(magic[:], 0); n == len(magic) && string(magic[:]) != elf.ELFMAG {
		return nil, ErrNotELF
	}
	f, err := elf.NewFile(r)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("truncated: the file ends inside its ELF headers")
	}
	return f, err
}
func (noLimit) ChargeNotes(int64) error             { return nil }
func (noLimit) ChargeSFrame(*elf.File, int64) error { return nil }
func (noLimit) ChargeNames(*elf.File, int64) error  { return nil }
func (noLimit) Held() int64                         { return 0 }
func (noLimit) ReleaseTo(int64)                     {}

// Process is a stopped process to walk: a core (OpenCore) or a running
// process (Attach).
type Process struct {
	ABI     emit.ABI
	Mem     io.ReaderAt // its memory, at virtual addresses
	Threads []Thread
	// Modules are the ELF files it maps: first those the walk uses, in
	// address order and not overlapping (a file mapped over an earlier
	// one is left out); then the files the process lists that were not
	// found, whose extent only the file gives (Start and End 0). A module
	// whose file cannot be read, or is not the one the process ran (its
	// GNU build ID differs from the one in memory), has NoSFrame.
	Modules []*Module
	close   func() error
}

// Close releases what the Process holds: the core file, or, for a running
// process, its memory and the threads, which run on.
func (p *Process) Close() error {
	if p.close == nil {
		return nil
	}
	err := p.close()
	p.close = nil
	return err
}

// setModules sets p.Modules from mods (any order, some without extent),
// each checked against the build ID in p's memory.
func (p *Process) setModules(mods []*Module) {
	for _, m := range mods {
		checkBuildID(m, p.Mem, p.ABI.ByteOrder())
	}
	var located, missing []*Module
	seen := map[string]bool{}
	for _, m := range mods {
		if m.End > m.Start {
			located = append(located, m)
		} else if !seen[m.Name] {
			seen[m.Name] = true
			missing = append(missing, m) // a library not found, its extent unknown
		}
	}
	slices.SortStableFunc(located, func(a, b *Module) int { return cmp.Compare(a.Start, b.Start) })
	p.Modules = nil
	for _, m := range located {
		if n := len(p.Modules); n > 0 && m.Start < p.Modules[n-1].End {
			continue
		}
		p.Modules = append(p.Modules, m)
	}
	p.Modules = append(p.Modules, missing...)
}

// Walker returns a walker of p's address space whose frames' Module is
// the index of their module in p.Modules.
func (p *Process) Walker() (*unwind.Walker, error) {
	var mods []unwind.Module
	for _, m := range p.Modules {
		if m.End <= m.Start {
			break // the modules not found, last
		}
		mods = append(mods, unwind.Module{Name: m.Name, Start: m.Start, End: m.End, Bias: m.Bias, SFrame: m.SFrame})
	}
	return unwind.New(p.ABI, p.Mem, mods)
}

// Stack is the walk of one thread.
type Stack struct {
	TID    int
	Frames []Frame // innermost first
	End    unwind.End
	// Detail is End's text, with what would take the walk further: the
	// module's reason for having no SFrame, the files not on this host.
	Detail string
}

// Frame is one frame of a Stack, symbolized.
type Frame struct {
	PC, SP uint64
	Module *Module // nil: the PC is in no module
	// Function is the name of the function symbol holding PC (a return
	// address is looked up inside the call), demangled, and Offset the
	// PC's offset in it; "" when no symbol holds it.
	Function string
	Offset   uint64
	// Exact: PC is an interrupted instruction, not a return address.
	// Signal: the frame is a signal trampoline.
	Exact, Signal bool
}

// sysrootHint says what to do about files of a process that are not on
// this host.
const sysrootHint = "walk with --sysroot DIR, DIR holding them at those paths (qemu-user's -L directory, or a copy of the other machine's files)"

// Walk walks the stack of every thread of p.
func (p *Process) Walk() ([]Stack, error) {
	w, err := p.Walker()
	if err != nil {
		return nil, err
	}
	var notHere []string // files the process maps that are not on this host
	for _, m := range p.Modules {
		if m.NoSFrame != nil && errors.Is(m.NoSFrame, fs.ErrNotExist) {
			notHere = append(notHere, m.Name)
		}
	}
	var stacks []Stack
	var frames []unwind.Frame
	for i := range p.Threads {
		var end unwind.End
		frames, end = w.Walk(&p.Threads[i].Regs, frames[:0])
		st := Stack{TID: p.Threads[i].TID, End: end, Detail: end.String()}
		for _, f := range frames {
			st.Frames = append(st.Frames, p.frame(f))
		}
		if end.Reason == unwind.EndNoSFrame && len(frames) > 0 {
			if m := st.Frames[len(frames)-1].Module; m != nil && m.NoSFrame != nil {
				st.Detail += ": " + m.Name + ": " + m.NoSFrame.Error()
				if errors.Is(m.NoSFrame, emit.ErrNoSFrame) {
					st.Detail += "; give it SFrame: sframe-gen " + m.Path + " in place, or a patched copy the program loads (sframe-gen --output-dir DIR " + m.Path + ", then LD_LIBRARY_PATH=DIR)"
				}
			}
		}
		if end.Reason == unwind.EndNoModule && len(notHere) > 0 {
			st.Detail += "; files the process maps are not on this host: " + strings.Join(notHere, ", ") + ": " + sysrootHint
		}
		stacks = append(stacks, st)
	}
	return stacks, nil
}

// frame symbolizes f, a frame of p.Walker's.
func (p *Process) frame(f unwind.Frame) Frame {
	fr := Frame{PC: f.PC, SP: f.SP, Exact: f.Exact, Signal: f.Signal}
	if f.Module < 0 {
		return fr
	}
	m := p.Modules[f.Module]
	fr.Module = m
	look := f.PC - m.Bias
	if !f.Exact && !f.Signal {
		look-- // inside the call
	}
	if name, off := m.Symbols.Holding(look); name != "" {
		fr.Function, fr.Offset = name, f.PC-m.Bias-(look-off)
	}
	return fr
}
