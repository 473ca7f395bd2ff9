package sframegen

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/elfpatch/sparse"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/verify"
)

// errUnchanged makes a replacement leave the file as it is.
var errUnchanged = errors.New("unchanged")

// processLinked gives an executable or shared library its loaded .sframe
// and PT_GNU_SFRAME, unless it has exactly that section already.
//
// A big file without a .sframe section (CFI of parallelCFIBytes or more)
// is copied to the new file while its section is made, placed and
// encoded, so that the copy, most of the time on big files, overlaps the
// work (-o on libLLVM.so: docs/performance.md); only what differs is
// written over the copy then. Any other file is planned first: a file
// whose SFrame is already what would be written is left untouched.
func (g *Generator) processLinked(w *writer, in *input, out *Outcome) error {
	if !hasCFISection(in.ef) {
		out.Reports = append(out.Reports, Report{})
		out.Status = NoCFI
		return w.unchanged()
	}
	if err := execHeadersTakeText(in.ef); err != nil {
		return err
	}
	var rep Report
	var err error
	if size, _ := cfiSize(in.ef); size >= parallelCFIBytes && emit.FindSection(in.ef) == nil {
		rep, err = g.linkedOverCopy(w, in)
	} else {
		rep, err = g.linkedPlanned(w, in)
	}
	if rep.Section != nil || err == nil || errors.Is(err, ErrNoCFI) {
		out.Reports = append(out.Reports, rep)
	}
	switch {
	case errors.Is(err, ErrNoCFI):
		out.Status = NoCFI
		return nil
	case err != nil:
		return err
	}
	out.FDEs = rep.Section.NumFDEs()
	if rep.UpToDate {
		out.Status = UpToDate
		return nil
	}
	out.Status = Patched
	return nil
}

// linkedPlanned makes the section of a linked file, plans the patch, and
// writes it unless the file would stay as it is (UpToDate). Without CFI,
// the file is copied to Out as it is.
func (g *Generator) linkedPlanned(w *writer, in *input) (Report, error) {
	sec, err := g.section(in, nil)
	rep := Report{Section: sec}
	if errors.Is(err, ErrNoCFI) {
		return rep, w.unchangedErr(err)
	}
	if err != nil {
		return rep, err
	}
	size, err := sec.encodedSize()
	if err != nil {
		return rep, err
	}
	patch, err := elfpatch.PlanLinked(w.src.File, w.data, size, sec.encodeAt)
	if err != nil {
		return rep, err
	}
	sec.Layout = patch.Layout()
	if same, err := patch.Unchanged(); err != nil {
		return rep, err
	} else if same {
		rep.UpToDate = true
		return rep, w.unchanged()
	}
	return rep, w.replace(patch.Write)
}

// unchangedErr copies the file as it is to Out, and returns err.
func (w *writer) unchangedErr(err error) error {
	if uerr := w.unchanged(); uerr != nil {
		return uerr
	}
	return err
}

// linkedOverCopy writes a linked file with its new section, the input
// copied to the new file (copy_file_range) while the section is made,
// placed and encoded on a goroutine of its own, which then writes what
// differs over the copy.
func (g *Generator) linkedOverCopy(w *writer, in *input) (Report, error) {
	var rep Report
	err := w.replace(func(tmp *os.File) error {
		// The copy reads the input through its file offset
		// (copy_file_range needs an *os.File source); everything else
		// reads at offsets. Holes of a sparse input stay holes.
		copying := make(chan struct{})
		var copyErr error // set before copying is closed
		wait := func() error {
			<-copying
			return copyErr
		}
		done := make(chan error, 1)
		go func() {
			var err error
			rep, err = g.patchOverCopy(w, in, tmp, copying, wait)
			done <- err
		}()
		copyErr = sparse.Copy(tmp, w.src.File, w.size)
		close(copying)
		return <-done
	})
	switch {
	case errors.Is(err, errUnchanged):
		return rep, ErrNoCFI
	case err == nil && rep.Section == nil:
		return rep, ErrNoCFI // copied as it is to Out
	}
	return rep, err
}

// patchOverCopy makes the section of a linked file and writes it over the
// copy of the input in tmp once wait says the copy is done.
func (g *Generator) patchOverCopy(w *writer, in *input, tmp *os.File, copying <-chan struct{}, wait func() error) (Report, error) {
	sec, err := g.section(in, copying)
	rep := Report{Section: sec}
	if err != nil {
		if cerr := wait(); cerr != nil {
			return rep, cerr
		}
		switch {
		case errors.Is(err, ErrNoCFI) && w.j.Out.Dir == nil:
			return Report{}, errUnchanged // in place: nothing to write
		case errors.Is(err, ErrNoCFI):
			return Report{}, nil // the output is the input unchanged: the copy
		}
		return rep, err
	}
	size, err := sec.encodedSize()
	if err != nil {
		if cerr := wait(); cerr != nil {
			return rep, cerr
		}
		return rep, err
	}
	layout, err := elfpatch.PatchLinkedCopyParts(w.src.File, tmp, size, sec.encodeAt, wait)
	sec.Layout = layout
	return rep, err
}

// hasCFISection reports whether f has a section cfi.Read may read: without
// one, a linked file is not copied to be left as it is.
func hasCFISection(f *elf.File) bool {
	_, ok := cfiSize(f)
	return ok
}

// cfiSize returns the size of f's largest section cfi.Read may read, and
// whether f has one.
func cfiSize(f *elf.File) (size uint64, ok bool) {
	for _, name := range []string{".eh_frame", ".debug_frame", ".zdebug_frame"} {
		if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
			size, ok = max(size, s.Size), true
		}
	}
	return size, ok
}

// execHeadersTakeText returns an error when a program header other than
// PT_LOAD with PF_X would make the Linux kernel refuse to register the
// section for an executable PT_LOAD (verify.ExecHeaders; what verify
// reports as a problem). PT_PHDR is left out: the patch clears its PF_X.
// Such a header after the text (PT_GNU_STACK of an executable stack, as
// linkers place it) does no harm and is kept.
func execHeadersTakeText(f *elf.File) error {
	for _, h := range verify.ExecHeaders(f) {
		if h.Takes >= 0 && h.Type != elf.PT_PHDR {
			return fmt.Errorf("program header %d (%v) has PF_X: %s; the section would not cover that text, so none is written (move the header after the PT_LOADs, or drop its PF_X)", h.Index, h.Type, h.Why)
		}
	}
	return nil
}
