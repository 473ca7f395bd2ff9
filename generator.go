package sframegen

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
	"github.com/sframe-gen/sframe-gen/lower"
)

// Options choose what is generated. The zero value is the command's
// default: SFrame version 3 that means what the CFI means at every address.
type Options struct {
	// Version is the SFrame version to write: 3 (also for 0) or 2, for the
	// readers of binutils 2.41-2.45.
	Version int
	// V2Layout, with Version 2, is the binutils layout written:
	// V2PCRel (2.45's, the default) or V2Binutils244.
	V2Layout V2Layout
	// GasCompat reproduces GNU as --gsframe and ld byte for byte, including
	// where their translation does not mean what the CFI means.
	GasCompat bool
	// Share says whether functions whose FRE data is the same share one
	// block of it (a smaller section, docs/sharing.md). The default
	// shares, but for GasCompat (GNU never shares) and big-endian files.
	Share Sharing
	// MergeFDEs, in a linked file, writes one FDE for a run of adjacent
	// functions whose FREs are the same single row (MergeAdjacent), also
	// across the alignment padding between them (MergePadding). Each
	// address means what its CFI means, but a reader that takes FDEs for
	// functions sees fewer of them (docs/cost.md). Not with GasCompat.
	MergeFDEs MergeFDEs
	// Strict makes any function that cannot be represented, and any broken
	// CFI entry, an error (*StrictError).
	Strict bool
	// Source is the CFI section read: .eh_frame when present (cfi.Auto), or
	// the one named.
	Source cfi.Source
	// Arch, when not empty, is the architecture the file must be for
	// (x86_64/amd64, aarch64/arm64, aarch64_be, s390x): a file for another
	// is an error.
	Arch string
}

// Sharing says whether functions with the same FRE data share one block
// of it ([Options].Share).
type Sharing int

const (
	// ShareDefault shares, except with GasCompat (GNU as and ld never
	// share, and their bytes are asked for), in a big-endian file (GNU
	// libsframe on a little-endian host, as cross ld and objdump run,
	// cannot read shared blocks there) and in a relocatable object (GNU
	// ld, which links it, lays its output out for the shared blocks'
	// size, writes them unshared and so overwrites what follows: a
	// corrupt symbol table).
	ShareDefault Sharing = iota
	// ShareAlways shares, objects too (for readers other than GNU ld); a
	// big-endian file is an error (ErrShareBigEndian), and so is
	// GasCompat.
	ShareAlways
	// ShareNever writes one block per function.
	ShareNever
)

// Generator generates SFrame sections with one set of [Options] and
// writes them into files: the pipeline of one file, which the sframe-gen
// command runs for every file it is given, in either of its forms. Its
// methods may be called from several goroutines at once.
type Generator struct {
	opt   Options
	want  *lower.Target // Options.Arch, when given
	res   Resources
	files atomic.Int32 // files being generated for at this moment
	// stageMu is held by the file whose memory is being charged in
	// stages, before its Cost is admitted (Process).
	stageMu sync.Mutex
	gc      *collector // Resources.TuneGC
}

// Resources are what a Generator shares between the files it processes
// at once, and with its caller.
type Resources struct {
	// Temps, when not nil, records the temporary files being written, so
	// that a signal handler can remove them ([replace.TempFiles.RemoveAll]).
	Temps *replace.TempFiles
	// Budget, when not nil, is the memory budget the files processed
	// at once share: each file's memory is charged to it before it is
	// allocated (its headers, then its Cost), a file waiting while
	// others hold what it needs and refused (*elfread.OverBudgetError) when it
	// needs more than the whole budget.
	Budget *elfread.MemoryBudget
	// Admit, when not nil, is called with each charge of a file's
	// memory (its headers, then its estimated Cost) before it is
	// allocated, after Budget has granted it: another budget, or a
	// caller that tunes itself to the files in flight. It may wait; it
	// returns what gives the memory back, or an error that fails the
	// file.
	Admit func(Cost) (release func(), err error)
	// Names names the functions of the reports from the file's symbol
	// table (Section.FunctionName), read when a function was left out.
	Names bool
	// TuneGC sets the Go garbage collector to the files processed, as
	// the sframe-gen command does: a tree's (ProcessTree) collected when
	// a memory limit says (32 MiB over the live heap and the small files'
	// estimates) while only small files are in flight, the settings it
	// found given back when the tree is done; outside ProcessTree,
	// turned off for the file, up to a heap its CFI bounds, and not
	// turned back on: for a process that generates for one file and
	// exits. GOGC or GOMEMLIMIT in the environment override it.
	TuneGC bool
}

// NewGenerator checks opt and returns a Generator for it.
func NewGenerator(opt Options, res Resources) (*Generator, error) {
	g := &Generator{opt: opt, res: res}
	if g.res.Temps == nil {
		g.res.Temps = new(replace.TempFiles)
	}
	if res.TuneGC {
		g.gc = new(collector)
	}
	switch opt.Version {
	case 0, 2, 3:
	default:
		return nil, fmt.Errorf("SFrame version %d: 2 or 3", opt.Version)
	}
	if opt.V2Layout != lower.V2PCRel && opt.Version != 2 {
		return nil, errors.New("a version 2 layout goes with version 2")
	}
	if opt.Share == ShareAlways && opt.GasCompat {
		return nil, errGasCompatShare
	}
	if opt.MergeFDEs != MergeNone && opt.GasCompat {
		return nil, errors.New("GasCompat reproduces GNU's bytes, and GNU writes an FDE per function (MergeFDEs)")
	}
	if opt.Arch != "" {
		want, err := lower.TargetByName(opt.Arch)
		if err != nil {
			return nil, err
		}
		g.want = &want
	}
	return g, nil
}

// Options returns the options g generates with.
func (g *Generator) Options() Options { return g.opt }

// errGasCompatShare refuses ShareAlways with GasCompat.
var errGasCompatShare = errors.New("GasCompat reproduces GNU's bytes, and GNU never shares FRE blocks")

// checkArch returns an error when Options.Arch names another ABI than the
// file's, target.
func (g *Generator) checkArch(target lower.Target) error {
	if g.want != nil && (g.want.Arch != target.Arch || g.want.BigEndian != target.BigEndian) {
		return &ArchError{File: target.String(), Want: g.want.String()}
	}
	return nil
}

// lowerOptions returns the lower.Options that mean what g's options say
// for target: the version, and FRE blocks shared as [sharingFor] decides.
func (g *Generator) lowerOptions(target lower.Target) (lower.Options, error) {
	share, _, err := sharingFor(target, g.opt)
	if err != nil {
		return lower.Options{}, err
	}
	// Asked for the smallest section (MergeFDEs), the start addresses
	// take the narrowest FRE type too (version 3, shared): a pass over
	// each function's FREs that costs more than its bytes are worth by
	// default (docs/cost.md).
	lo := lower.Options{GasCompat: g.opt.GasCompat, ShareFREs: share,
		NarrowFREs: share && g.opt.Version != 2 && g.opt.MergeFDEs != MergeNone, MergeFDEs: g.opt.MergeFDEs}
	if g.opt.Version == 2 {
		lo.Version, lo.V2Layout = 2, g.opt.V2Layout
	}
	return lo, nil
}

// admit takes cost from the caller's budget (Resources.Admit), and sets
// the collector to it (Resources.TuneGC).
func (g *Generator) admit(cost Cost) (release func(), err error) {
	if g.gc != nil {
		done := g.gc.admit(cost)
		if g.res.Admit == nil {
			return done, nil
		}
		release, err := g.res.Admit(cost)
		if err != nil {
			done()
			return nil, err
		}
		return func() { release(); done() }, nil
	}
	if g.res.Admit == nil {
		return func() {}, nil
	}
	return g.res.Admit(cost)
}

// MergeFDEs says which runs of adjacent functions are written as one FDE
// (Options.MergeFDEs).
type MergeFDEs = lower.MergeFDEs

// The merges.
const (
	// MergeNone writes an FDE per function: the default.
	MergeNone = lower.MergeNone
	// MergeAdjacent merges functions that touch.
	MergeAdjacent = lower.MergeAdjacent
	// MergePadding also merges across alignment padding (no-op
	// instructions or zeros no function covers).
	MergePadding = lower.MergePadding
	// MergeAll also merges functions of several rows whose FRE data no
	// other function shares, where that takes fewer bytes.
	MergeAll = lower.MergeAll
)

// V2Layout is the binutils layout of a version 2 section
// (Options.V2Layout).
type V2Layout = lower.V2Layout

// The version 2 layouts.
const (
	// V2PCRel is binutils 2.45's layout (FDE_FUNC_START_PCREL), what the
	// 2025 kernel unwinder reads; the default.
	V2PCRel = lower.V2PCRel
	// V2Binutils244 is binutils 2.41-2.44's layout.
	V2Binutils244 = lower.V2Binutils244
)

// begin counts a file being generated for until the function it returns
// is called.
func (g *Generator) begin() (end func()) {
	g.files.Add(1)
	return func() { g.files.Add(-1) }
}
