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
			fmt.Fprintf(&msgs, "sframe-gen: %s: %s\n", displayName(j.path), r.reason)
		}
		r.msgs = msgs.Bytes()
	}()
	fail := func(err error) fileResult { return failed(r, err) }
	at, err := j.root.Place(j.rel)
	if err != nil {
		return fail(unwrapPath(err))
	}
	defer at.Dir.Close()
	src, err := elfpatch.OpenSource(at)
	var notRegular *elfpatch.ErrNotRegular
	switch {
	case errors.As(err, &notRegular):
		r.status, r.reason = statusSkipped, err.Error()
		return r
	case err != nil:
		return fail(unwrapPath(err))
	}
	defer src.Close()
	switch {
	case j.id == [2]uint64{}: // one FILE: no walk
		j.outside = src.Links() > 1
	case src.ID() != j.id:
		return fail(fmt.Errorf("%w (since the walk)", elfpatch.ErrChanged))
	}
	in := src.File
	var magic [8]byte
	n, _ := in.ReadAt(magic[:], 0)
	st, err := in.Stat()
	if err != nil {
		return fail(err)
	}
	w := &fileWriter{c: fc, j: j, src: src, in: in, size: src.Size(), perm: src.Mode().Perm(), ro: ro, sparse: isSparse(st)}
	switch {
	case n >= 4 && string(magic[:4]) == elf.ELFMAG:
	case n == 8 && string(magic[:]) == elfpatch.ArchiveMagic:
		r.kind = "archive"
		release, err := o.charge(archiveCost(in, st.Size(), o.source))
		if err != nil {
			return fail(err)
		}
		defer release()
		return fc.processArchive(w, o, r)
	default:
		r.status, r.reason = statusSkipped, "not an ELF file"
		return w.unchanged(r)
	}
	ef, err := elf.NewFile(in)
	if err != nil {
		return fail(describeCut(in, src.Size(), err))
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
	cost := linkedCost(ef, o.source)
	if target.Relocatable {
		if cost, err = objectCost(ef, st.Size(), o.source); err != nil {
			return fail(err)
		}
	}
	release, err := o.charge(cost)
	if err != nil {
		return fail(err)
	}
	defer release()
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
	if err := w.replace(w.writeBytes(out)); err != nil {
		return failed(r, err)
	}
	c.warnSignature(w.j.path, bytes.NewReader(data), int64(len(data)))
	r.status = statusPatched
	return r
}

// moduleSignature ends a kernel module signed by scripts/sign-file.
const moduleSignature = "~Module signature appended~\n"

// warnSignature warns when the object r (size bytes, as read) is a signed
// kernel module: the patch keeps the signature after the object
// (elfpatch.Trailer), but it no longer signs it.
func (c *cli) warnSignature(file string, r io.ReaderAt, size int64) {
	tail := make([]byte, len(moduleSignature))
	if size < int64(len(tail)) {
		return
	}
	if _, err := r.ReadAt(tail, size-int64(len(tail))); err == nil && string(tail) == moduleSignature {
		fmt.Fprintf(c.stderr, "sframe-gen: %s: warning: the module signature appended to it no longer matches; sign the module again\n", displayName(file))
	}
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
		c.upToDate(w.j.path, o)
		r.status = statusUpToDate
		return w.unchanged(r)
	}
	if err := w.replace(patch.Write); err != nil {
		return failed(r, err)
	}
	c.warnExecHeaders(w.j.path, ef)
	if o.verbose {
		shown := o
		shown.output = w.j.out
		c.summary(w.j.path, shown, target, res, size, linkedWhere(patch.Layout()))
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
// errNoCFI. With -v it says what it wrote, or that data is up to date.
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
	switch {
	case bytes.Equal(out, data):
		c.upToDate(name, o)
	case o.verbose:
		c.summary(name, o, target, res, len(sec), "with .rela.sframe")
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
	src  *elfpatch.Source
	in   *os.File // src.File
	size int64
	perm os.FileMode
	ro   elfpatch.ReplaceOptions
	// sparse is set when the input has holes: what is written from memory
	// keeps its blocks of zeros as holes.
	sparse bool
}

// writeBytes returns the writer of a result built in memory.
func (w *fileWriter) writeBytes(data []byte) func(tmp *os.File) error {
	if w.sparse {
		return func(tmp *os.File) error { return writeKeepingHoles(tmp, data) }
	}
	return func(tmp *os.File) error { _, err := tmp.Write(data); return err }
}

// holeBlock is the unit writeKeepingHoles leaves unwritten when it is all
// zeros.
const holeBlock = 64 << 10

// writeKeepingHoles writes data to the start of the empty file tmp,
// leaving every holeBlock-aligned block of zeros unwritten (a hole), so
// that a sparse input patched in memory gives a sparse output.
func writeKeepingHoles(tmp *os.File, data []byte) error {
	if st, err := tmp.Stat(); err != nil || st.Size() != 0 {
		_, err := tmp.Write(data) // not empty: every byte written
		return err
	}
	var zeros [holeBlock]byte
	start := -1 // of the data run being collected
	flush := func(end int) error {
		if start < 0 {
			return nil
		}
		_, err := tmp.WriteAt(data[start:end], int64(start))
		start = -1
		return err
	}
	for off := 0; off < len(data); off += holeBlock {
		end := min(off+holeBlock, len(data))
		if bytes.Equal(data[off:end], zeros[:end-off]) {
			if err := flush(off); err != nil {
				return err
			}
		} else if start < 0 {
			start = off
		}
	}
	if err := flush(len(data)); err != nil {
		return err
	}
	return tmp.Truncate(int64(len(data)))
}

// isSparse reports whether the file st describes has fewer blocks on disk
// than its size needs.
func isSparse(st os.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && s.Blocks*512 < st.Size()
}

// replace writes the file's new contents through a temporary file: over
// the file and its links in the tree (each opened again below the
// operand's directory, never through a symbolic link), or under
// --output-dir.
func (w *fileWriter) replace(write func(tmp *os.File) error) error {
	if w.j.out != "" {
		dst, err := w.j.outRoot.Place(w.j.outRel)
		if err != nil {
			return fmt.Errorf("writing %s: %w", displayName(w.j.out), unwrapPath(err))
		}
		defer dst.Dir.Close()
		ro := elfpatch.ReplaceOptions{Written: w.ro.Written, KeepTimes: w.ro.KeepTimes}
		if err := w.c.temps.Replace(dst, w.src, w.perm, ro, write); err != nil {
			return fmt.Errorf("writing %s: %w", displayName(w.j.out), err)
		}
		return w.linkOutputs(dst)
	}
	ro := w.ro
	ro.InPlace = w.j.outside
	for i, rel := range w.j.linkRels {
		l, err := w.j.root.Place(rel)
		if err != nil {
			return fmt.Errorf("%s: %w", w.j.links[i], unwrapPath(err))
		}
		defer l.Dir.Close()
		ro.Links = append(ro.Links, l)
	}
	return w.c.temps.Replace(w.src.Place, w.src, w.perm, ro, write)
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

// linkOutputs makes the other names of an output written under
// --output-dir (the hard links of its input in the tree).
func (w *fileWriter) linkOutputs(dst elfpatch.Place) error {
	for i, rel := range w.j.outLinkRels {
		l, err := w.j.outRoot.Place(rel)
		if err != nil {
			return fmt.Errorf("linking %s: %w", w.j.outLinks[i], unwrapPath(err))
		}
		err = elfpatch.Link(dst, l)
		l.Dir.Close()
		if err != nil {
			return fmt.Errorf("linking %s: %w", displayName(w.j.outLinks[i]), unwrapPath(err))
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
