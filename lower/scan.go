package lower

import (
	"debug/elf"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// LowerScan is LowerFile for a section opened with cfi.Open or
// cfi.OpenMapped (its entries not read): it reads the FDEs with
// cfi.Scanners and lowers each as it is read, so that the CFI FDEs are
// never all held at once. With opt.Workers the section is cut into parts
// (partWeights), each read and lowered by the first worker free;
// Options.Hold and Options.MappedCFI concern it too. The result is
// LowerFile's for cfi.Read's Frames, but with no Sources (each FDE is
// gone once lowered; a Skip holds a copy of its FDE); the errors of the
// section's entries (Read's Frames.Errors) are returned beside it, and
// Result.FDEsRead counts the FDEs read.
func LowerScan(f *elf.File, frames *cfi.Frames, t Target, opt Options) (res *Result, plt []PLTSection, errs []*cfi.EntryError, err error) {
	if opt.MappedCFI {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				res, plt, errs, err = nil, nil, nil, faultError(r)
			}
		}()
	}
	if err := checkScan(frames, t, opt); err != nil {
		return nil, nil, nil, err
	}
	pltFDEs, plt, err := filePLT(f, t, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	sc := &partScan{frames: frames, t: t, opt: opt, filter: fileFilter(f, t, plt)}
	weights := []int{1}
	if opt.Workers > 1 {
		weights = partWeights(opt.Workers, len(frames.Data))
		// The parts where .eh_frame_hdr's table says the FDEs start,
		// which saves walking the whole section before the workers
		// start: each part's Scanner checks its cut.
		sc.cuts, sc.counts, sc.indexed = frames.CutByIndex(weights)
	}
	if !sc.indexed {
		sc.cuts, sc.counts = frames.CutWeighted(weights)
	}
	if opt.afterCut != nil {
		opt.afterCut()
	}
	read := 0
	if len(sc.counts) > 1 {
		res, read, errs = sc.parallel(sc.fdes())
		if res == nil && sc.indexed {
			// A cut of the table's is not where an entry starts, a
			// part holds more FDEs than it listed, or some function
			// failed: cut by walking the entries, and lower again.
			if opt.recut != nil {
				opt.recut()
			}
			sc.indexed = false
			sc.cuts, sc.counts = frames.CutWeighted(weights)
			res, read, errs = sc.parallel(sc.fdes())
		}
	}
	if res == nil {
		// One piece: the only part, or the parts again for the serial
		// error when some function failed.
		n := sc.fdes()
		sc.cuts, sc.counts = []int{0, len(frames.Data)}, []int{n - 8}
		sc.indexed = false
		res = newResult(t, opt, n, sc.packedOf(0)+1024, true)
		if read, errs, err = sc.scan(res, 0); err != nil {
			return nil, nil, nil, err
		}
	}
	res.FDEsRead = read
	if t.Relocatable {
		// (A linked file's are shared once its PLT FDEs are appended.)
		if err := res.share(opt); err != nil {
			return nil, nil, nil, err
		}
	}
	padObject(res, t)
	res, plt, err = finishFile(res, f, t, pltFDEs, plt, opt)
	return res, plt, errs, err
}

// checkScan refuses what LowerScan cannot lower.
func checkScan(frames *cfi.Frames, t Target, opt Options) error {
	switch {
	case frames == nil:
		return fmt.Errorf("no CFI")
	case opt.Version != 0 && opt.Version != emit.Version3:
		return fmt.Errorf("LowerScan writes SFrame version 3 only (version %d: LowerFile)", opt.Version)
	case len(frames.FDEs) != 0 || len(frames.Errors) != 0:
		return fmt.Errorf("LowerScan needs a CFI section opened with cfi.Open, not read")
	case frames.Relocatable != t.Relocatable:
		return fmt.Errorf("CFI of a relocatable object is %v, target says %v", frames.Relocatable, t.Relocatable)
	}
	return t.check()
}

// partScan is LowerScan's section cut into parts: each part's FDEs are
// read with a cfi.Scanner and lowered as they are read.
type partScan struct {
	frames *cfi.Frames
	t      Target
	opt    Options
	filter *fdeFilter
	cuts   []int // part k is the section's bytes [cuts[k], cuts[k+1])
	counts []int // and holds counts[k] FDEs (at most; CutByIndex: about)
	// indexed says the cuts are CutByIndex's, which scan checks: each
	// part reads at most room(k) FDEs and ends at the next cut.
	indexed bool
}

// room is the number of FDEs part k has room for: the count of its cut,
// and with CutByIndex's, 1/16 more and 16 (the linker may leave some
// FDEs out of the table: one of libLLVM.so's 160,805), as long as each
// FDE takes 8 bytes.
func (sc *partScan) room(k int) int {
	if !sc.indexed {
		return sc.counts[k]
	}
	return min(sc.counts[k]+sc.counts[k]/16+16, (sc.cuts[k+1]-sc.cuts[k])/8)
}

// fdes is the number of FDEs the parts have room for, and the PLT's.
func (sc *partScan) fdes() int {
	n := 8
	for k := range sc.counts {
		n += sc.room(k)
	}
	return n
}

// errMiscut is the error of a part whose cut (CutByIndex's) is wrong.
var errMiscut = errors.New("the .eh_frame_hdr table does not match .eh_frame")

// packedOf is the size to reserve for the packed FRE data of part k:
// about 1.25 bytes per byte of CFI instructions (packedSize; 4/3 here,
// which held every part of LLVM, cc1plus, node and the C libraries
// measured), of which the part has what its FDEs' headers (16 bytes at
// least in the usual .eh_frame encoding) leave of its size, and the
// attribute records. (A part that needs more gets an array of its own, at
// the cost of a copy.)
func (sc *partScan) packedOf(k int) int {
	return emit.FDEAttrSize*sc.counts[k] + max(0, sc.cuts[k+1]-sc.cuts[k]-minFDEHeader*sc.counts[k])*4/3
}

// scan lowers part k into p: the FDEs read, the broken entries.
func (sc *partScan) scan(p *Result, k int) (read int, errs []*cfi.EntryError, err error) {
	if sc.opt.MappedCFI {
		// On a worker's goroutine too.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				read, errs, err = 0, nil, faultError(r)
			}
		}()
	}
	s := sc.frames.Scanner(sc.cuts[k], sc.cuts[k+1])
	r, err := newRangeLowerer(p, sc.frames, sc.room(k), sc.t, sc.opt, true)
	if err != nil {
		return 0, nil, err
	}
	var fde cfi.FDE
	for s.Next(&fde) {
		if read++; sc.indexed && read > sc.room(k) {
			return 0, nil, errMiscut
		}
		switch reason, ok := sc.filter.keep(&fde); {
		case reason != "":
			r.skip(Skip{FDE: &fde, Reason: reason})
		case ok:
			if err := r.lower(&fde); err != nil {
				return 0, nil, err
			}
		}
	}
	if sc.indexed && k+1 < len(sc.counts) && s.Offset() != sc.cuts[k+1] {
		return 0, nil, errMiscut
	}
	return read, s.Errors(), nil
}

// parallel lowers the parts on the workers (lowerParallel) into a result
// for n FDEs. It returns a nil result when some function failed.
func (sc *partScan) parallel(n int) (res *Result, read int, errs []*cfi.EntryError) {
	packed := 1024 // and the PLT FDEs
	for k := range sc.counts {
		packed += sc.packedOf(k)
	}
	res = newResult(sc.t, sc.opt, n, packed, true)
	parts := make([]part, len(sc.counts))
	partErrs := make([][]*cfi.EntryError, len(sc.counts))
	partRead := make([]int, len(sc.counts))
	for k := range parts {
		parts[k] = part{fdes: sc.room(k), packed: sc.packedOf(k), run: func(p *Result) (err error) {
			partRead[k], partErrs[k], err = sc.scan(p, k)
			return err
		}}
	}
	if !lowerParallel(res, sc.t, parts, sc.opt.Workers, sc.opt.Hold) {
		return nil, 0, nil
	}
	for k := range parts {
		read += partRead[k]
		errs = append(errs, partErrs[k]...)
	}
	return res, read, errs
}

// minFDEHeader is the size of the smallest usual .eh_frame FDE header:
// length, CIE pointer, PC-relative 4-byte start and 4-byte size.
const minFDEHeader = 16

// faultError returns the error of a panic recovered while the section's
// mapping is read: a memory fault (the panic of a goroutine that
// SetPanicOnFault, which says where it faulted) or, should lowering have
// a bug, any other panic, which the CLI then reports as an error rather
// than a crash.
func faultError(r any) error {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		return fmt.Errorf("memory fault reading the CFI section at %#x (was the file cut while it was read?)", f.Addr())
	}
	return fmt.Errorf("internal error: %v", r)
}
