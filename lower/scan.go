package lower

import (
	"debug/elf"
	"fmt"
	"runtime/debug"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// LowerScan is LowerFile for a section opened with cfi.Open or
// cfi.OpenMapped (its entries not read): it reads the FDEs with
// cfi.Scanners and lowers each as it is read, so that the CFI FDEs are
// never all held at once. With opt.Workers the section is cut into parts
// (4 per worker), each read and lowered by the first worker free;
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
		weights = partWeights(opt.Workers)
	}
	sc.cuts, sc.counts = frames.CutWeighted(weights)
	if opt.afterCut != nil {
		opt.afterCut()
	}
	n := 8 // the PLT FDEs
	for _, c := range sc.counts {
		n += c
	}
	read := 0
	if len(sc.counts) > 1 {
		res, read, errs = sc.parallel(n)
	}
	if res == nil {
		// One piece: the only part, or the parts again for the serial
		// error when some function failed.
		sc.cuts, sc.counts = []int{0, len(frames.Data)}, []int{n - 8}
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
	counts []int // and holds counts[k] FDEs (at most)
}

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
	r, err := newRangeLowerer(p, sc.frames, sc.counts[k], sc.t, sc.opt, true)
	if err != nil {
		return 0, nil, err
	}
	var fde cfi.FDE
	for s.Next(&fde) {
		read++
		switch reason, ok := sc.filter.keep(&fde); {
		case reason != "":
			r.skip(Skip{FDE: &fde, Reason: reason})
		case ok:
			if err := r.lower(&fde); err != nil {
				return 0, nil, err
			}
		}
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
		parts[k] = part{fdes: sc.counts[k], packed: sc.packedOf(k), run: func(p *Result) (err error) {
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
