package sframegen

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
)

// Status is what [Generator.Process] did with a file.
type Status int

const (
	// Patched: a new SFrame section was written.
	Patched Status = iota
	// UpToDate: the file's SFrame is already what would be written; the
	// file was not touched.
	UpToDate
	// NoCFI: an ELF file without call-frame information, left as it is.
	NoCFI
	// Skipped: not ELF, another architecture, not a regular file: left
	// alone (Outcome.Reason says why).
	Skipped
	// Failed: an error; the file is as it was.
	Failed
)

// String is the status as reports name it.
func (s Status) String() string {
	return [...]string{"patched", "up-to-date", "no-cfi", "skipped", "failed"}[s]
}

// Job is one file for [Generator.Process]: where it is, where its result
// goes, and how it is replaced.
type Job struct {
	// In is the file, one the user named: a file SFrame has nothing to
	// say about (not ELF, another architecture) is an error, and a file
	// with other hard links is written in its own inode, so that they
	// stay one file ([Generator.ProcessTree] does otherwise for the files
	// of a tree).
	In replace.Place
	// Out, when its Dir is not nil, is where the result is written
	// instead of over In; a file that gets no SFrame is copied there as
	// it is.
	Out replace.Place
	// OutLinks are other names to give Out's file (In's hard links in a
	// tree, mirrored under an output directory).
	OutLinks []replace.Place
	// Replace says how the file is replaced: Links (In's other names in
	// the tree, replaced with it), InPlace (it has links elsewhere),
	// KeepTimes, NoSync and the hooks. Links and InPlace are ignored with
	// Out.
	Replace replace.ReplaceOptions
}

// Outcome is what Process did with a file and found in it.
type Outcome struct {
	Status Status
	// Kind is the file's kind: "archive", or as [Kind] names an ELF file
	// ("" when it is neither).
	Kind string
	// Arch is the file's ABI ("mixed" for an archive whose objects are
	// for several).
	Arch string
	// FDEs is the number of functions with an SFrame FDE in the file
	// (Patched, UpToDate).
	FDEs int
	// Reason says why the file was Skipped, or the error.
	Reason string
	// Reports are, in order, the ELF objects generated for: the file, or
	// an archive's objects (as far as Process got).
	Reports []Report
	// Warnings are what the user should know of the file written.
	Warnings []string
}

// InternalError is the error of a panic while a file was processed: a bug
// of sframe-gen's, which left the file as it was.
type InternalError struct {
	Panic any    // what the panic was called with
	Stack []byte // the goroutine's stack where it was recovered
}

// Error says what panicked, on one line.
func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error (a bug in sframe-gen; please report it with this file, which is unchanged): %v", e.Panic)
}

// Report is what was generated for one ELF object: the file, or a member
// of an archive.
type Report struct {
	// Member is the archive member's name ("" for the file itself).
	Member string
	// Section is the section generated; nil when the object has no CFI.
	Section *Section
	// UpToDate says the object held this section already.
	UpToDate bool
}

// Process generates the SFrame section of the file j.In and writes the
// file with it (an object's .sframe and .rela.sframe, a linked file's
// loaded .sframe and PT_GNU_SFRAME, every object of a static archive)
// over it or to j.Out, atomically: the file is replaced only while it is
// still the file read, unchanged, with every attribute kept; on any
// failure it is as before. A file whose SFrame is already what would be
// written is not touched. Errors do not name the file. A panic while the
// file is processed (a bug; the file is as before) is returned as an
// *InternalError, so that a batch goes on with its other files.
func (g *Generator) Process(j Job) (out Outcome, err error) {
	return g.process(j, [2]uint64{}, nil)
}

// process is Process. seen, when not zero, is the identity (device and
// inode) of the file the caller found at j.In, walking a tree: another
// file there now is replace.ErrChanged, and a file SFrame has nothing to say
// about is Skipped. closeInput, when not nil, is given the input file to
// close, instead of closing it before process returns: the last close of
// a file that was replaced frees its blocks, which may wait for the
// device (inputCloser).
func (g *Generator) process(j Job, seen [2]uint64, closeInput func(*os.File)) (out Outcome, err error) {
	defer g.begin()()
	defer func() {
		if err != nil {
			out.Status, out.Reason = Failed, err.Error()
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			err = &InternalError{Panic: p, Stack: debug.Stack()}
		}
	}()
	src, err := replace.OpenSource(j.In)
	var notRegular *replace.NotRegularError
	switch {
	case errors.As(err, &notRegular) && seen != [2]uint64{}:
		out.Status, out.Reason = Skipped, err.Error()
		return out, nil
	case err != nil:
		return out, replace.UnwrapPath(err)
	}
	if closeInput == nil {
		defer src.Close()
	} else {
		defer closeInput(src.File)
	}
	named := seen == [2]uint64{}
	if !named && src.ID() != seen {
		return out, fmt.Errorf("%w (since the walk)", replace.ErrChanged)
	}
	if named && j.Out.Dir == nil {
		j.Replace.InPlace = src.Links() > 1
	}
	if j.Out.Dir == nil {
		// A replacement of this file killed on its way (its journal):
		// finished when every name of the file is known here.
		if err := src.Resume(!j.Replace.InPlace); err != nil {
			return out, replace.UnwrapPath(err)
		}
	}
	w := &writer{g: g, j: j, src: src, size: src.Size()}
	var r io.ReaderAt = src.File
	if src.Size() <= wholeReadBytes {
		if w.data, err = readAll(src.File, src.Size()); err != nil {
			return out, err
		}
		r = bytes.NewReader(w.data)
	}
	st := g.startStaging()
	defer st.done()
	kind := magicOf(r)
	if kind == archiveMagic {
		out.Kind = "archive"
		cost, err := archiveCost(src.File, src.Size(), g.opt.Source, st.acquire)
		if err != nil {
			return out, err
		}
		if err := st.admit(cost); err != nil {
			return out, err
		}
		return out, g.processArchive(w, &out)
	}
	ef, err := readELF(r, src.Size(), st.charge)
	if err != nil {
		if named || kind == elfMagic {
			return out, err
		}
		out.Status, out.Reason = Skipped, "not an ELF file"
		return out, w.unchanged()
	}
	out.Kind = elfread.Kind(ef)
	in, err := g.inputOf(r, src.Size(), ef)
	var unsupported *UnsupportedError
	switch {
	case errors.As(err, &unsupported) && !named:
		out.Status, out.Reason = Skipped, err.Error()
		return out, w.unchanged()
	case unsupported != nil && unsupported.Err != nil:
		return out, unsupported.Err
	case err != nil:
		return out, err
	}
	out.Arch = in.target.String()
	cost := linkedCost(ef, g.opt.Source)
	if in.target.Relocatable {
		if cost, err = objectCost(ef, src.Size(), g.opt.Source); err != nil {
			return out, err
		}
	}
	if err := st.names(ef, src.Size()); err != nil {
		return out, err
	}
	if err := st.admit(cost); err != nil {
		return out, err
	}
	if in.target.Relocatable {
		return out, g.processObject(w, in, &out)
	}
	return out, g.processLinked(w, in, &out)
}

// staging charges the memory of one file that is allocated before its
// Cost is known (its headers, an archive's members' headers, the symbol
// table -v reads) as it comes, then its Cost (admit), one file at a
// time: a file between its first charge and its Cost would otherwise
// wait, holding part of the budget, for files that wait for it.
type staging struct {
	g        *Generator
	locked   bool
	held     int64 // charged to Resources.Budget
	releases []func()
}

// startStaging starts charging a file in stages; done ends it.
func (g *Generator) startStaging() *staging {
	g.stageMu.Lock()
	return &staging{g: g, locked: true}
}

// acquire charges c to Resources.Budget, what the file holds already
// counted (a file needing more than the budget in all is refused, never
// left waiting for itself), and admits it (Resources.Admit); release
// gives it back.
func (s *staging) acquire(c Cost) (release func(), err error) {
	b := s.g.res.Budget
	if b != nil {
		if c.Bytes < 0 || c.Bytes > b.Limit()-elfread.MemoryReserve-s.held {
			need := int64(1 << 62)
			if c.Bytes >= 0 && c.Bytes < need-s.held-elfread.MemoryReserve {
				need = s.held + c.Bytes + elfread.MemoryReserve
			}
			return nil, &elfread.OverBudgetError{Need: need, Limit: b.Limit(), What: c.What}
		}
		if err := b.Acquire(c.Bytes, c.What); err != nil {
			return nil, err
		}
		s.held += c.Bytes
	}
	done, err := s.g.admit(c)
	if err != nil {
		if b != nil {
			b.Release(c.Bytes)
			s.held -= c.Bytes
		}
		return nil, err
	}
	return func() {
		done()
		if b != nil {
			b.Release(c.Bytes)
			s.held -= c.Bytes
		}
	}, nil
}

// charge charges c, held until done.
func (s *staging) charge(c Cost) error {
	release, err := s.acquire(c)
	if err != nil {
		return err
	}
	s.releases = append(s.releases, release)
	return nil
}

// names charges the symbol table of ef (size bytes) when the reports name
// functions (Resources.Names).
func (s *staging) names(ef *elf.File, size int64) error {
	if !s.g.res.Names {
		return nil
	}
	return chargeTo(s.charge).ChargeNames(ef, size)
}

// admit admits the file's Cost, its last charge: the next file may
// start.
func (s *staging) admit(c Cost) error {
	err := s.charge(c)
	s.g.stageMu.Unlock()
	s.locked = false
	return err
}

// done gives back all that was charged.
func (s *staging) done() {
	if s.locked {
		s.g.stageMu.Unlock()
		s.locked = false
	}
	for _, release := range s.releases {
		release()
	}
}

// wholeReadBytes is the size up to which a file is read whole, in one
// read, before anything is parsed: its ELF headers (debug/elf's and
// elfpatch's), CFI and symbols are then read from memory, not by reads of
// a few bytes each (a small shared library: a fourth of the reads). Most
// files of a tree are that small.
const wholeReadBytes = 128 << 10

// section generates the section of in: lowered (hold: see lowerFile), with
// Options.Strict applied, the function names for reports
// (Resources.Names), and a linked file without any function refused. It
// returns the section even with a *StrictError, for its report.
func (g *Generator) section(in *input, hold <-chan struct{}) (*Section, error) {
	sec, err := g.lowerFile(in, hold)
	if err != nil {
		return nil, err
	}
	if g.res.Names && (len(sec.result.Skipped) > 0 || len(sec.EntryErrors) > 0) {
		sec.names = target.NewSymbols(in.ef)
	}
	if g.opt.Strict {
		if sk := sec.skipped(); len(sk) > 0 || len(sec.EntryErrors) > 0 {
			return sec, &StrictError{Skipped: sk, EntryErrors: sec.EntryErrors}
		}
	}
	if !in.target.Relocatable && sec.NumFDEs() == 0 {
		return sec, ErrNoFunctions
	}
	return sec, nil
}

// readAll reads the n bytes of r.
func readAll(r io.ReaderAt, n int64) ([]byte, error) {
	data := make([]byte, n)
	if m, err := r.ReadAt(data, 0); int64(m) != n {
		return nil, fmt.Errorf("reading the file: %w", err)
	}
	return data, nil
}

// fileMagic is what a file starts with: the magic of a static archive,
// of an ELF file, or neither (what generating leaves alone unless the user
// named it).
type fileMagic int

const (
	noMagic fileMagic = iota
	archiveMagic
	elfMagic
)

// magicOf reads the magic r starts with.
func magicOf(r io.ReaderAt) fileMagic {
	var magic [len(elfpatch.ArchiveMagic)]byte
	n, _ := r.ReadAt(magic[:], 0)
	switch {
	case string(magic[:n]) == elfpatch.ArchiveMagic:
		return archiveMagic
	case n >= len(elf.ELFMAG) && string(magic[:len(elf.ELFMAG)]) == elf.ELFMAG:
		return elfMagic
	}
	return noMagic
}
