package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"syscall"

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
		r.status = statusUpToDate
		return w.unchanged(r)
	}
	if err := w.replace(w.writeBytes(out)); err != nil {
		return fail(err)
	}
	r.status = statusPatched
	return r
}

// isArchive reports whether path is a regular file starting like a static
// archive.
func isArchive(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	var magic [len(elfpatch.ArchiveMagic)]byte
	n, _ := f.ReadAt(magic[:], 0)
	return n == len(magic) && string(magic[:]) == elfpatch.ArchiveMagic
}

// generateArchive is the single-file form on a static archive: in place,
// or to o.output.
func (c *cli) generateArchive(file string, o generateOptions) int {
	st, err := os.Stat(file)
	if err != nil {
		return c.fail(file, unwrapPath(err))
	}
	r := c.processFile(&job{path: file, out: o.output, size: st.Size(), mode: st.Mode()}, o, elfpatch.ReplaceOptions{})
	c.stderr.Write(r.msgs)
	if r.status == statusFailed {
		return exitFailure
	}
	return exitOK
}
