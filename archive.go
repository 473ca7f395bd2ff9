package sframegen

import (
	"bytes"
	"debug/elf"
	"errors"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// processArchive gives every ELF relocatable object of a static archive
// what an object gets (.sframe and .rela.sframe) and rewrites the
// archive, its symbol index recomputed (elfpatch.PatchArchive). Members
// that are not objects, have no CFI or are for an architecture without
// SFrame are kept as they are (with Options.Arch, another architecture
// is an error). Each object generated for is one Report.
func (g *Generator) processArchive(w *writer, out *Outcome) error {
	data := w.data
	if data == nil {
		var err error
		if data, err = readAll(w.src.File, w.size); err != nil {
			return err
		}
	}
	withCFI := 0
	arches := map[string]bool{}
	patched, err := elfpatch.PatchArchive(data, func(name string, member []byte) ([]byte, error) {
		if len(member) < 4 || string(member[:4]) != elf.ELFMAG {
			return member, nil
		}
		ef, err := elfread.ReadELF(bytes.NewReader(member), int64(len(member)))
		if err != nil {
			return nil, err
		}
		if ef.Type != elf.ET_REL {
			return member, nil
		}
		in, err := g.inputOf(bytes.NewReader(member), int64(len(member)), ef)
		var unsupported *UnsupportedError
		switch {
		case errors.As(err, &unsupported):
			return member, nil
		case err != nil:
			return nil, err
		}
		arches[in.target.String()] = true
		object, rep, err := g.patchObject(in, member)
		rep.Member = name
		if rep.Section != nil || err == nil || errors.Is(err, ErrNoCFI) {
			out.Reports = append(out.Reports, rep)
		}
		switch {
		case errors.Is(err, ErrNoCFI):
			return member, nil
		case err != nil:
			return nil, err
		}
		withCFI++
		out.FDEs += rep.Section.NumFDEs()
		return object, nil
	})
	if err != nil {
		return err
	}
	for a := range arches {
		if out.Arch != "" && out.Arch != a {
			out.Arch = "mixed"
			break
		}
		out.Arch = a
	}
	switch {
	case withCFI == 0:
		out.Status = NoCFI
		return w.unchanged()
	case bytes.Equal(patched, data):
		out.Status = UpToDate
		return w.unchanged()
	}
	if err := w.replace(w.writeBytes(patched)); err != nil {
		return err
	}
	out.Status = Patched
	return nil
}
