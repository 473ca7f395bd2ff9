package sframegen

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/cfi"
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
