package sframegen

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/stats"
	"github.com/sframe-gen/sframe-gen/emit/verify"
)

// Stats returns the statistics of the ELF file r (of size bytes, parsed
// as f): of its .sframe section, its coverage checked against the CFI as
// verify.File checks it; or, when it has none or dryRun is set, of the
// section g would generate, as GenerateAt(r, size, 0) makes it (the bytes
// --raw writes), with the functions left out by reason and those version
// 2 would leave out too. The fields naming the file (File, Kind,
// FileBytes) are the caller's to set. A file with neither .sframe nor CFI
// gets an error that is ErrNoCFI.
func (g *Generator) Stats(r io.ReaderAt, size int64, f *elf.File, dryRun bool) (*stats.Stats, error) {
	src := g.opt.Source
	var ehFrame, ehFrameHdr uint64
	if s := f.Section(".eh_frame"); s != nil {
		ehFrame = s.Size
	}
	if s := f.Section(".eh_frame_hdr"); s != nil {
		ehFrameHdr = s.Size
	}
	if sec := emit.FindSection(f); sec != nil && !dryRun {
		// Decoded here, and checked by verify.File against the CFI.
		data, err := emit.SectionData(sec)
		if err != nil {
			return nil, err
		}
		st, _, err := measure(data)
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", sec.Name, err)
		}
		st.EHFrameBytes, st.EHFrameHdrBytes = ehFrame, ehFrameHdr
		st.Shared = st.SharedFDEs > 0
		rep, err := verify.File(f, verify.Options{Source: src})
		if errors.Is(err, ErrNoCFI) {
			return st, nil // nothing describes the code: no coverage to measure
		}
		if err != nil {
			return nil, err
		}
		st.Cover(rep)
		return st, nil
	}

	gen, err := g.GenerateAt(r, size, 0)
	noFunctions := false
	switch {
	case errors.Is(err, ErrNoCFI):
		return nil, fmt.Errorf("no .sframe section and %w", ErrNoCFI)
	case errors.Is(err, ErrNoFunctions) && gen != nil:
		noFunctions = true // nothing is written: every function is left out
	case err != nil:
		return nil, err
	}
	st := &stats.Stats{Skipped: []stats.Reason{}, V2LostReasons: []stats.Reason{}}
	var fdes []emit.FDE
	if !noFunctions {
		if st, fdes, err = measure(gen.Bytes()); err != nil {
			return nil, fmt.Errorf("encoding .sframe: %w", err)
		}
	}
	st.DryRun = true
	st.EHFrameBytes, st.EHFrameHdrBytes = ehFrame, ehFrameHdr
	// The functions the CFI describes, one FDE at a time (a Scanner, as
	// the lowering reads them: none kept).
	frames, err := cfi.Open(f, src)
	if err != nil {
		return nil, err
	}
	var fde cfi.FDE
	for sc := frames.Scanner(0, len(frames.Data)); sc.Next(&fde); {
		if fde.Size > 0 {
			st.CFIFunctions++
			st.CFIBytes += fde.Size
		}
	}
	omitted := stats.Tally{}
	for _, s := range gen.Omitted() {
		if s.Emitted || s.FDE.Size == 0 {
			continue
		}
		st.UncoveredFunctions++
		st.UncoveredBytes += s.FDE.Size
		omitted.Add(s.Reason, s.FDE.Size)
	}
	st.Skipped = omitted.Sorted()
	st.CoveredFunctions = st.CFIFunctions - st.UncoveredFunctions
	st.CoveredBytes = st.CFIBytes - st.UncoveredBytes
	st.Shared, st.Unshared = gen.Shared, gen.Unshared
	if noFunctions {
		h := gen.Result().Section.Header
		st.ABI, st.Version = h.ABI.String(), h.Version
		return st, nil
	}
	if st.Version == emit.Version3 {
		st.V2Lost, st.V2LostReasons = v2Loss(gen, fdes)
	}
	return st, nil
}

// measure decodes the section data and measures it (stats.Measure); the
// functions are returned too.
func measure(data []byte) (*stats.Stats, []emit.FDE, error) {
	s, err := emit.Decode(data)
	if err != nil {
		return nil, nil, err
	}
	fdes, err := s.Functions()
	if err != nil {
		return nil, nil, err
	}
	st, err := stats.Measure(s, fdes, data)
	return st, fdes, err
}

// v2Loss counts the functions of the version 3 section gen (decoded as
// fdes) that version 2 cannot express (in the 2.45 layout), by reason.
func v2Loss(gen *Section, fdes []emit.FDE) (int, []stats.Reason) {
	lost, byReason := 0, stats.Tally{}
	for i := range fdes {
		f := &fdes[i]
		if f.Size == 0 {
			continue
		}
		if reason := gen.V2Refusal(i, f); reason != "" {
			lost++
			byReason.Add(reason, uint64(f.Size))
		}
	}
	return lost, byReason.Sorted()
}

// ObjectStats is Stats of o, an object of the file at path (elfread's
// Meter.Objects: the file, or a member of the archive path), with what
// it reads charged to m first (an existing section checked against the
// CFI: Meter.ChargeVerify; a dry run's generation: its Cost), and the
// fields naming it set: File (Object.Name), Kind (elfread.Kind, or
// "archive-member") and FileBytes.
func (g *Generator) ObjectStats(path string, o *elfread.Object, m *elfread.Meter, dryRun bool) (*stats.Stats, error) {
	if !dryRun && emit.FindSection(o.File) != nil {
		// The section decoded and checked against the CFI.
		if err := m.ChargeVerify(o.File, o.Size, g.opt.Source); err != nil {
			return nil, err
		}
	}
	admit := func(c Cost) (func(), error) {
		return func() {}, m.Charge(elfread.Cost{Bytes: c.Bytes, What: c.What})
	}
	charged := &Generator{opt: g.opt, want: g.want, res: Resources{Temps: g.res.Temps, Admit: admit}}
	st, err := charged.Stats(o.R, o.Size, o.File, dryRun)
	if err != nil {
		return nil, err
	}
	st.File, st.Kind, st.FileBytes = o.Name(path), elfread.Kind(o.File), o.Size
	if o.Member != "" {
		st.Kind = "archive-member"
	}
	return st, nil
}

// TreeStats computes the statistics of every file of t on workers
// goroutines (0: GOMAXPROCS), the biggest files first, calls file (when
// not nil) with each file's in the order of the walk, on the caller's
// goroutine, and returns their total. A file's are those of the file
// (ObjectStats), or of each member of a static archive that generating
// would patch. What generating leaves alone is counted, not described: a
// file that is neither ELF nor an archive, an architecture without SFrame
// (a file the user named fails, as generating fails it), an object with
// neither .sframe nor CFI; a path that is not a regular file is passed
// over. What is read of a file is charged to b before it is read
// (elfread.Meter), held until the file is done: the files read at once
// share it, a file waiting for memory others hold.
func (g *Generator) TreeStats(t *Tree, b *elfread.MemoryBudget, dryRun bool, workers int, file func(*stats.File)) *stats.Total {
	results := make([]*stats.File, len(t.Files))
	total := stats.NewTotal()
	t.Each(workers, func(i int) {
		results[i] = g.treeFileStats(t.Files[i], b, dryRun)
	}, func(i int) {
		total.AddFile(results[i])
		if file != nil {
			file(results[i])
		}
		results[i] = nil // let the file's statistics go
	})
	return total
}

// treeFileStats reads f, a file of a walked Tree (opened below its held
// directory, never through a symbolic link), and returns what TreeStats
// finds in it.
func (g *Generator) treeFileStats(f *TreeFile, b *elfread.MemoryBudget, dryRun bool) *stats.File {
	r := &stats.File{}
	fail := func(name string, err error) { r.Failed = append(r.Failed, stats.Failure{Name: name, Err: err}) }
	switch {
	case f.Err != nil:
		fail(f.Path, f.Err)
		return r
	case !f.Regular():
		return r // links, directories, FIFOs and devices are not read
	}
	file, size, err := f.Open()
	if err != nil {
		fail(f.Path, replace.UnwrapPath(err))
		return r
	}
	defer file.Close()
	// What generate leaves alone as not ELF, and does not count: a file
	// that starts with neither the ELF nor the archive magic (an empty
	// one too).
	if magicOf(file) == noMagic {
		if f.Named {
			fail(f.Path, elfread.ErrNotELF) // named: as generate fails it
		} else {
			r.Skipped++
		}
		return r
	}
	m := elfread.NewMeter(b)
	defer m.Release()
	_, err = m.Objects(file, size, func(o elfread.Object) bool {
		if o.Err != nil {
			fail(o.Name(f.Path), o.Err)
			return true
		}
		if err := Supported(o.File); err != nil {
			if f.Named && o.Member == "" {
				fail(f.Path, err) // named: as generate fails it
			} else {
				r.Skipped++ // generate leaves it alone
			}
			return false
		}
		st, err := g.ObjectStats(f.Path, &o, m, dryRun)
		switch {
		case errors.Is(err, ErrNoCFI):
			r.WithoutCFI++ // generate leaves it as it is
			return false
		case err != nil:
			fail(o.Name(f.Path), err)
			return true
		}
		r.Objects = append(r.Objects, st)
		return true
	})
	if err != nil {
		fail(f.Path, err)
		return r
	}
	r.InstalledBytes = size
	return r
}
