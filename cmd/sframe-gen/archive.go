package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/lower"
)

// processArchive gives every ELF relocatable object of the static archive
// w.in what an object gets (.sframe + .rela.sframe) and rewrites the
// archive, its symbol index recomputed (elfpatch.PatchArchive). Members
// that are not objects, have no CFI or are for an architecture without
// SFrame are kept as they are (under --arch, another architecture is a
// failure). Messages name a member as ARCHIVE(MEMBER).
func (c *cli) processArchive(w *fileWriter, o generateOptions, r fileResult) fileResult {
	fail := func(err error) fileResult {
		r.status, r.reason = statusFailed, err.Error()
		return r
	}
	data, err := readAll(w.in, w.size)
	if err != nil {
		return fail(err)
	}
	withCFI := 0
	arches := map[string]bool{}
	out, err := elfpatch.PatchArchive(data, func(name string, member []byte) ([]byte, error) {
		if len(member) < 4 || string(member[:4]) != elf.ELFMAG {
			return member, nil
		}
		label := fmt.Sprintf("%s(%s)", displayName(w.j.path), displayName(name))
		ef, err := elf.NewFile(bytes.NewReader(member))
		if err != nil {
			return nil, describeCut(bytes.NewReader(member), int64(len(member)), err)
		}
		if ef.Type != elf.ET_REL {
			return member, nil
		}
		target, err := lower.TargetForELF(ef)
		if err != nil {
			if o.arch != "" {
				return nil, fmt.Errorf("file is for %v %v, not %s (--arch)", ef.Class, ef.Machine, o.arch)
			}
			return member, nil
		}
		if err := checkArch(target, o.arch); err != nil {
			return nil, err
		}
		arches[target.String()] = true
		patched, fdes, err := c.patchObjectBytes(label, member, ef, target, o)
		if err == errNoCFI {
			return member, nil
		}
		if err != nil {
			return nil, err
		}
		withCFI++
		r.fdes += fdes
		return patched, nil
	})
	if err != nil {
		return fail(err)
	}
	for a := range arches {
		if r.arch != "" && r.arch != a {
			r.arch = "mixed"
			break
		}
		r.arch = a
	}
	switch {
	case withCFI == 0:
		r.status = statusNoCFI
		return w.unchanged(r)
	case bytes.Equal(out, data):
		c.upToDate(w.j.path, o)
		r.status = statusUpToDate
		return w.unchanged(r)
	}
	if err := w.replace(w.writeBytes(out)); err != nil {
		return fail(err)
	}
	r.status = statusPatched
	return r
}

// isArchive reports whether the file f starts like a static archive.
func isArchive(f *os.File) bool {
	var magic [len(elfpatch.ArchiveMagic)]byte
	n, _ := f.ReadAt(magic[:], 0)
	return n == len(magic) && string(magic[:]) == elfpatch.ArchiveMagic
}

// generateArchive is the single-file form on a static archive, src: in
// place, or to o.output.
func (c *cli) generateArchive(file string, src *elfpatch.Source, o generateOptions) int {
	// processFile opens the archive again in the directory held open,
	// without following a link, and checks it is the same file.
	j := &job{path: file, root: src.Dir, rel: src.Name, id: src.ID(), outside: src.Links() > 1}
	if o.output != "" {
		out, err := elfpatch.NamedPlace(o.output)
		if err != nil {
			return c.fail(o.output, unwrapPath(err))
		}
		defer out.Dir.Close()
		j.out, j.outRoot, j.outRel = o.output, out.Dir, out.Name
	}
	r := c.processFile(j, o, elfpatch.ReplaceOptions{KeepTimes: o.keepTimes})
	c.stderr.Write(r.msgs)
	if r.status == statusFailed {
		return exitFailure
	}
	return exitOK
}
