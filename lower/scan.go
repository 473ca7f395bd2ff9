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
	if frames == nil {
		return nil, nil, nil, fmt.Errorf("lower: no CFI")
	}
	if opt.Version != 0 && opt.Version != emit.Version3 {
		return nil, nil, nil, fmt.Errorf("lower: LowerScan writes SFrame version 3 only (version %d: LowerFile)", opt.Version)
	}
	if len(frames.FDEs) != 0 || len(frames.Errors) != 0 {
		return nil, nil, nil, fmt.Errorf("lower: LowerScan needs a CFI section opened with cfi.Open, not read")
	}
	if frames.Relocatable != t.Relocatable {
		return nil, nil, nil, fmt.Errorf("lower: CFI of a relocatable object is %v, target says %v", frames.Relocatable, t.Relocatable)
	}
	if err := t.check(); err != nil {
		return nil, nil, nil, err
	}
	variant, plt, err := pltForELF(f, t)
	if err != nil {
		return nil, nil, nil, err
	}
	filter := fileFilter(f, t, plt)
	weights := []int{1}
	if opt.Workers > 1 {
		weights = partWeights(opt.Workers)
	}
	cuts, counts := frames.CutWeighted(weights)
	if opt.afterCut != nil {
		opt.afterCut()
	}
	n := 8 // the PLT FDEs
	for _, c := range counts {
		n += c
	}
	// The packed FRE data of a part: about 1.25 bytes per byte of CFI
	// instructions (packedSize; 4/3 here, which held every part of
	// LLVM, cc1plus, node and the C libraries measured), of which the
	// part has what its FDEs' headers (16 bytes at least in the usual
	// .eh_frame encoding) leave of its size, and the attribute records.
	// (A part that needs more gets an array of its own, at the cost of a
	// copy.)
	packedOf := func(k int) int {
		return emit.FDEAttrSize*counts[k] + max(0, cuts[k+1]-cuts[k]-minFDEHeader*counts[k])*4/3
	}
	scan := func(p *Result, k int) (read int, errs []*cfi.EntryError, err error) {
		if opt.MappedCFI {
			// On a worker's goroutine too.
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer func() {
				if r := recover(); r != nil {
					read, errs, err = 0, nil, faultError(r)
				}
			}()
		}
		s := frames.Scanner(cuts[k], cuts[k+1])
		r, err := newRangeLowerer(p, frames, counts[k], t, opt, true)
		if err != nil {
			return 0, nil, err
		}
		var fde cfi.FDE
		for s.Next(&fde) {
			read++
			switch reason, ok := filter.keep(&fde); {
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
	read := 0
	if len(counts) > 1 {
		packed := 1024 // and the PLT FDEs
		for k := range counts {
			packed += packedOf(k)
		}
		res = newResult(t, opt, n, packed, true)
		parts := make([]part, len(counts))
		partErrs := make([][]*cfi.EntryError, len(counts))
		partRead := make([]int, len(counts))
		for k := range parts {
			parts[k] = part{fdes: counts[k], packed: packedOf(k), run: func(p *Result) (err error) {
				partRead[k], partErrs[k], err = scan(p, k)
				return err
			}}
		}
		if lowerParallel(res, t, parts, opt.Workers, opt.Hold) {
			for k := range parts {
				read += partRead[k]
				errs = append(errs, partErrs[k]...)
			}
		} else {
			res = nil // some function failed: lower again in one piece, for the serial error
		}
	}
	if res == nil {
		cuts, counts = []int{0, len(frames.Data)}, []int{n - 8}
		res = newResult(t, opt, n, packedOf(0)+1024, true)
		if read, errs, err = scan(res, 0); err != nil {
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
	res, plt, err = finishFile(res, t, variant, plt, opt)
	return res, plt, errs, err
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
	return fmt.Errorf("lower: internal error: %v", r)
}
