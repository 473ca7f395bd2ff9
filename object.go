package sframegen

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/elfpatch"
)

// processObject gives a relocatable object its .sframe and .rela.sframe.
func (g *Generator) processObject(w *writer, in *input, out *Outcome) error {
	data := w.data
	if data == nil {
		var err error
		if data, err = readAll(w.src.File, w.size); err != nil {
			return err
		}
		in.r = bytes.NewReader(data)
	}
	patched, rep, err := g.patchObject(in, data)
	if rep.Section != nil || err == nil || errors.Is(err, ErrNoCFI) {
		out.Reports = append(out.Reports, rep)
	}
	switch {
	case errors.Is(err, ErrNoCFI):
		out.Status = NoCFI
		return w.unchanged()
	case err != nil:
		return err
	}
	out.FDEs = rep.Section.NumFDEs()
	if rep.UpToDate {
		out.Status = UpToDate
		return w.unchanged()
	}
	if err := w.replace(w.writeBytes(patched)); err != nil {
		return err
	}
	if signedModule(bytes.NewReader(data), int64(len(data))) {
		out.Warnings = append(out.Warnings, "warning: the module signature appended to it no longer matches; sign the module again")
	}
	out.Status = Patched
	return nil
}

// patchObject generates the SFrame of the relocatable object data (read
// as in) and returns the object patched with it, and its report
// (UpToDate when that is data as it is); ErrNoCFI when it has none.
func (g *Generator) patchObject(in *input, data []byte) ([]byte, Report, error) {
	sec, err := g.section(in, nil)
	rep := Report{Section: sec}
	if err != nil {
		return nil, rep, err
	}
	enc, err := sec.result.Section.Encode()
	if err != nil {
		return nil, rep, fmt.Errorf("encoding .sframe: %w", err)
	}
	sec.parts = [][]byte{enc}
	patched, err := elfpatch.PatchObjectBytes(data, enc, sec.Relocs)
	if err != nil {
		return nil, rep, err
	}
	rep.UpToDate = bytes.Equal(patched, data)
	return patched, rep, nil
}

// moduleSignature ends a kernel module signed by scripts/sign-file.
const moduleSignature = "~Module signature appended~\n"

// signedModule reports whether the object r (size bytes, as read) is a
// signed kernel module: the patch keeps the signature after the object
// (elfpatch.Trailer), but it no longer signs it.
func signedModule(r io.ReaderAt, size int64) bool {
	tail := make([]byte, len(moduleSignature))
	if size < int64(len(tail)) {
		return false
	}
	_, err := r.ReadAt(tail, size-int64(len(tail)))
	return err == nil && string(tail) == moduleSignature
}
