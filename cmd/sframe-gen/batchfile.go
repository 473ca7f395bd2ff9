package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/lower"
)

// status is what the batch did with one file.
type status int

const (
	statusPatched  status = iota // a new SFrame section written
	statusUpToDate               // its SFrame already what we would write: not touched
	statusNoCFI                  // an ELF file without call-frame information: left as it is
	statusSkipped                // not ELF, another architecture, a symbolic link: left alone
	statusFailed                 // an error: left as it was
)

func (s status) String() string {
	return [...]string{"patched", "up-to-date", "no-cfi", "skipped", "failed"}[s]
}

// fileResult is the outcome of one job.
type fileResult struct {
	status status
	kind   string // executable, shared-library, object, archive, ...
	arch   string
	fdes   int    // functions with an SFrame FDE in the file (patched, up to date)
	reason string // why it was skipped, or the error
	msgs   []byte // what processing the file printed (-v, --strict), in order
}

// processFile runs generate on one regular file of the batch, printing
// only into its own buffer.
// ro gives how files are replaced (KeepTimes, and the Written and
// DirSynced hooks of the batch's workers); the job adds its links.
func (c *cli) processFile(j *job, o generateOptions, ro elfpatch.ReplaceOptions) (r fileResult) {
	var msgs bytes.Buffer
	fc := &cli{stdout: c.stdout, stderr: &msgs, temps: c.temps}
	defer func() {
		if r.status == statusFailed {
			fmt.Fprintf(&msgs, "sframe-gen: %s: %s\n", j.path, r.reason)
		}
		r.msgs = msgs.Bytes()
	}()
	fail := func(err error) fileResult { return failed(r, err) }
	in, err := os.OpenFile(j.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fail(unwrapPath(err))
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fail(err)
	}
	if !st.Mode().IsRegular() {
		r.status, r.reason = statusSkipped, "not a regular file ("+fileKind(st.Mode())+")"
		return r
	}
	var magic [8]byte
	n, _ := in.ReadAt(magic[:], 0)
	w := &fileWriter{c: fc, j: j, in: in, size: st.Size(), perm: st.Mode().Perm(), ro: ro}
	switch {
	case n >= 4 && string(magic[:4]) == elf.ELFMAG:
	case n == 8 && string(magic[:]) == elfpatch.ArchiveMagic:
		r.kind = "archive"
		return fc.processArchive(w, o, r)
	default:
		r.status, r.reason = statusSkipped, "not an ELF file"
		return w.unchanged(r)
	}
	ef, err := elf.NewFile(in)
	if err != nil {
		return fail(describeCut(in, st.Size(), err))
	}
	r.kind = elfKind(ef)
	target, err := lower.TargetForELF(ef)
	if err != nil {
		if o.arch != "" {
			return fail(fmt.Errorf("file is for %v %v, not %s (--arch)", ef.Class, ef.Machine, o.arch))
		}
		r.status, r.reason = statusSkipped, fmt.Sprintf("unsupported architecture (%v %v)", ef.Class, ef.Machine)
		return w.unchanged(r)
	}
	r.arch = target.String()
	if err := checkArch(target, o.arch); err != nil {
		return fail(err)
	}
	switch ef.Type {
	case elf.ET_REL, elf.ET_EXEC, elf.ET_DYN:
	default:
		r.status, r.reason = statusSkipped, fmt.Sprintf("ELF type %v", ef.Type)
		return w.unchanged(r)
	}
	if target.Relocatable {
		return fc.processObject(w, ef, target, o, r)
	}
	return fc.processLinked(w, ef, target, o, r)
}

// failed is r failed with err.
func failed(r fileResult, err error) fileResult {
	r.status, r.reason = statusFailed, err.Error()
	return r
}

// processObject gives a relocatable object its .sframe and .rela.sframe
// (processFile's messages go to c).
func (c *cli) processObject(w *fileWriter, ef *elf.File, target lower.Target, o generateOptions, r fileResult) fileResult {
	data, err := readAll(w.in, w.size)
	if err != nil {
		return failed(r, err)
	}
	out, fdes, err := c.patchObjectBytes(w.j.path, data, ef, target, o)
	switch {
	case err == errNoCFI:
		r.status = statusNoCFI
		return w.unchanged(r)
	case err != nil:
		return failed(r, err)
	}
	r.fdes = fdes
	if bytes.Equal(out, data) {
		r.status = statusUpToDate
		return w.unchanged(r)
	}
	if err := w.replace(func(tmp *os.File) error { _, err := tmp.Write(out); return err }); err != nil {
		return failed(r, err)
	}
	r.status = statusPatched
	return r
}

// processLinked gives an executable or shared library its loaded .sframe
// and PT_GNU_SFRAME, unless it already has exactly that section.
func (c *cli) processLinked(w *fileWriter, ef *elf.File, target lower.Target, o generateOptions, r fileResult) fileResult {
	var res *lower.Result
	var size int
	err := errNoCFI
	if hasCFISection(ef) {
		res, size, err = c.makeLinked(w.j.path, w.in, w.size, ef, target, o)
	}
	switch {
	case err == errNoCFI:
		r.status = statusNoCFI
		return w.unchanged(r)
	case err != nil:
		return failed(r, err)
	}
	r.fdes = res.Section.NumFDEs()
	patch, err := elfpatch.PlanLinked(w.in, size, func(addr uint64) ([][]byte, error) {
		parts, err := res.EncodePlaced(addr)
		if err != nil {
			return nil, fmt.Errorf("encoding .sframe: %w", err)
		}
		return parts, nil
	})
	if err != nil {
		return failed(r, err)
	}
	if same, err := patch.Unchanged(); err != nil {
		return failed(r, err)
	} else if same {
		r.status = statusUpToDate
		return w.unchanged(r)
	}
	if err := w.replace(patch.Write); err != nil {
		return failed(r, err)
	}
	c.warnExecHeaders(w.j.path, ef)
	if o.verbose {
		c.summary(w.j.path, generateOptions{output: w.j.out}, res, size, linkedWhere(patch.Layout()))
	}
	r.status = statusPatched
	return r
}

// checkArch fails when --arch names another target than the file's.
func checkArch(target lower.Target, arch string) error {
	if arch == "" {
		return nil
	}
	want, err := lower.TargetByName(arch)
	if err != nil {
		return usageError{err.Error()}
	}
	if want.Arch != target.Arch || want.BigEndian != target.BigEndian {
		return fmt.Errorf("file is for %s, not %s (--arch)", target, want)
	}
	return nil
}

// patchObjectBytes generates the SFrame of the relocatable object data
// (read as ef) and returns the patched object and its number of FDEs, or
// errNoCFI.
func (c *cli) patchObjectBytes(name string, data []byte, ef *elf.File, target lower.Target, o generateOptions) ([]byte, int, error) {
	res, err := c.lowerCFI(name, nil, int64(len(data)), ef, target, o)
	if err != nil {
		return nil, 0, err
	}
	sec, err := res.Section.Encode()
	if err != nil {
		return nil, 0, fmt.Errorf("encoding .sframe: %w", err)
	}
	relocs := make([]elfpatch.Reloc, len(res.Relocs))
	for i, r := range res.Relocs {
		relocs[i] = elfpatch.Reloc{Offset: r.Offset, Type: r.Type, Section: uint32(r.Section), Addend: r.Addend}
	}
	out, err := elfpatch.PatchObjectBytes(data, sec, relocs)
	if err != nil {
		return nil, 0, err
	}
	if o.verbose {
		c.summary(name, o, res, len(sec), "with .rela.sframe")
	}
	return out, res.Section.NumFDEs(), nil
}

// elfKind names the kind of an ELF file for the report.
func elfKind(f *elf.File) string {
	switch f.Type {
	case elf.ET_REL:
		return "object"
	case elf.ET_EXEC:
		return "executable"
	case elf.ET_DYN:
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return "pie-executable"
			}
		}
		return "shared-library"
	}
	return f.Type.String()
}

// fileWriter writes one job's result: over the file (with its other
// links) or under --output-dir.
type fileWriter struct {
	c    *cli
	j    *job
	in   *os.File
	size int64
	perm os.FileMode
	ro   elfpatch.ReplaceOptions
}

// replace writes the file's new contents through a temporary file.
func (w *fileWriter) replace(write func(tmp *os.File) error) error {
	if w.j.out != "" {
		err := w.c.temps.Replace(w.j.out, w.perm, elfpatch.ReplaceOptions{Written: w.ro.Written}, write)
		if err != nil {
			return fmt.Errorf("writing %s: %w", w.j.out, err)
		}
		return w.finishOutput()
	}
	ro := w.ro
	ro.Links, ro.InPlace = w.j.links, w.j.outside
	return w.c.temps.Replace(w.j.path, w.perm, ro, write)
}

// unchanged returns r after copying the file as it is under --output-dir
// (in place, nothing is written).
func (w *fileWriter) unchanged(r fileResult) fileResult {
	if w.j.out == "" {
		return r
	}
	if err := w.replace(func(tmp *os.File) error { return elfpatch.CopySparse(tmp, w.in, w.size) }); err != nil {
		r.status, r.reason = statusFailed, err.Error()
	}
	return r
}

// finishOutput gives an output written under --output-dir the input's
// times (-p) and makes its links.
func (w *fileWriter) finishOutput() error {
	if w.ro.KeepTimes {
		st, err := w.in.Stat()
		if err != nil {
			return err
		}
		at := st.ModTime()
		if s, ok := st.Sys().(*syscall.Stat_t); ok {
			at = timespec(s.Atim)
		}
		if err := os.Chtimes(w.j.out, at, st.ModTime()); err != nil {
			return err
		}
	}
	for _, l := range w.j.outLinks {
		os.Remove(l)
		if err := os.Link(w.j.out, l); err != nil {
			return fmt.Errorf("linking %s: %w", l, err)
		}
	}
	return nil
}

// unwrapPath drops the path of an *fs.PathError: messages name the file
// already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readAll reads the n bytes of r.
func readAll(r io.ReaderAt, n int64) ([]byte, error) {
	data := make([]byte, n)
	if m, err := r.ReadAt(data, 0); int64(m) != n {
		return nil, fmt.Errorf("reading the file: %w", err)
	}
	return data, nil
}

// timespec converts a stat time.
func timespec(ts syscall.Timespec) time.Time { return time.Unix(ts.Unix()) }

// upToDate reports whether patching the linked file in with the section
// encode gives would leave it byte for byte as it is.
func upToDate(in *os.File, size int, encode func(addr uint64) ([][]byte, error)) bool {
	plan, err := elfpatch.PlanLinked(in, size, encode)
	if err != nil {
		return false
	}
	same, err := plan.Unchanged()
	return err == nil && same
}

// objectUpToDate reports whether patching the object in (size bytes) with
// the section and relocations would leave it byte for byte as it is.
func objectUpToDate(in io.ReaderAt, size int64, sec []byte, relocs []elfpatch.Reloc) bool {
	data, err := readAll(in, size)
	if err != nil {
		return false
	}
	out, err := elfpatch.PatchObjectBytes(data, sec, relocs)
	return err == nil && bytes.Equal(out, data)
}
