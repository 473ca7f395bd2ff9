package sframegen

import (
	"debug/elf"
	"errors"
	"io"
	"runtime"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/lower"
)

// parallelCFIBytes is the size of a CFI section (Cost.CFIBytes) from which
// Process lowers it on every CPU (about 4096 FDEs): below it, starting
// goroutines costs about what they save. The bytes are the same either
// way. The measurements are in docs/performance.md.
const parallelCFIBytes = 192 << 10

// lowerFile reads and lowers the CFI of in. A linked file's CFI is lowered
// as it is read (lower.LowerScan, on every CPU for a big section, read
// where the file is mapped when in.r is an *os.File); an object's, or any
// file's for version 2, is read whole first (lower.LowerFile). It returns
// ErrNoCFI when nothing describes any code. hold, when not nil, is a copy
// of the file being made meanwhile: one worker waits for it to end, so
// that the copy has a CPU of its own (docs/performance.md).
// Options.Strict is not applied.
func (g *Generator) lowerFile(in *input, hold <-chan struct{}) (*Section, error) {
	lo, err := g.lowerOptions(in.target)
	if err != nil {
		return nil, err
	}
	var res *lower.Result
	var errs []*cfi.EntryError
	if in.target.Relocatable || lo.Version == 2 {
		res, errs, err = g.lowerRead(in.ef, in.target, lo, hold)
	} else {
		res, errs, err = g.lowerScan(in.r, in.size, in.ef, in.target, lo, hold)
	}
	if err != nil {
		return nil, err
	}
	sec := &Section{Target: in.target, result: res, EntryErrors: errs}
	sec.Shared, sec.Unshared, _ = sharingFor(in.target, g.opt)
	for _, r := range res.Relocs {
		sec.Relocs = append(sec.Relocs, elfpatch.Reloc{Offset: r.Offset, Type: r.Type, Section: uint32(r.Section), Addend: r.Addend})
	}
	return sec, nil
}

// tune sets the scheduling of lowering a CFI section of n bytes.
func tune(lo *lower.Options, n int, hold <-chan struct{}) {
	if n < parallelCFIBytes {
		return
	}
	lo.Workers = runtime.GOMAXPROCS(0)
	if lo.Workers > 1 {
		lo.Hold = hold
	}
}

// lowerRead is lowerFile's general path: the CFI section read whole, then
// lowered (lower.LowerFile).
func (g *Generator) lowerRead(f *elf.File, target lower.Target, lo lower.Options, hold <-chan struct{}) (*lower.Result, []*cfi.EntryError, error) {
	frames, err := cfi.Read(f, g.opt.Source)
	if errors.Is(err, cfi.ErrNoCFI) || err == nil && len(frames.FDEs) == 0 && len(frames.Errors) == 0 {
		return nil, nil, ErrNoCFI
	}
	if err != nil {
		return nil, nil, err
	}
	if lo.Version == 2 {
		tune(&lo, len(frames.Data), hold)
	}
	res, _, err := lower.LowerFile(f, frames, target, lo)
	if err != nil {
		return nil, nil, err
	}
	return res, frames.Errors, nil
}

// lowerScan is lowerFile's fast path for a linked file: its CFI lowered as
// it is read (lower.LowerScan).
func (g *Generator) lowerScan(r io.ReaderAt, size int64, f *elf.File, target lower.Target, lo lower.Options, hold <-chan struct{}) (*lower.Result, []*cfi.EntryError, error) {
	// The section is read where the file is mapped, not copied (a
	// copy costs --raw a fifth of its time on libLLVM.so:
	// docs/performance.md); LowerScan turns a fault (the file cut
	// meanwhile) into an error and keeps no reference into the mapping.
	var frames *cfi.Frames
	var err error
	if mapped, unmap := mapFile(r, size); mapped != nil {
		// Unmapped on a goroutine of its own: nothing refers to the
		// mapping once LowerScan returns, and tearing down the mapping
		// of a big file (0.4-0.6 ms for libLLVM.so) then overlaps the
		// encoding instead of coming before it.
		defer func() { go unmap() }()
		frames, err = cfi.OpenMapped(f, g.opt.Source, mapped)
		lo.MappedCFI = true
	} else {
		frames, err = cfi.Open(f, g.opt.Source)
	}
	if errors.Is(err, cfi.ErrNoCFI) {
		return nil, nil, ErrNoCFI
	}
	if err != nil {
		return nil, nil, err
	}
	tune(&lo, len(frames.Data), hold)
	res, _, errs, err := lower.LowerScan(f, frames, target, lo)
	if err != nil {
		// As when the section is read first: without FDEs and broken
		// entries there is nothing to lower, whatever else is wrong.
		if all, rerr := cfi.Read(f, g.opt.Source); rerr == nil && len(all.FDEs) == 0 && len(all.Errors) == 0 {
			return nil, nil, ErrNoCFI
		}
		return nil, nil, err
	}
	if res.FDEsRead == 0 && len(errs) == 0 {
		return nil, nil, ErrNoCFI
	}
	return res, errs, nil
}
