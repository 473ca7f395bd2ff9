package lower

import (
	"fmt"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// newResult returns an empty result with room for n FDEs (and their
// Sources, unless scanned) and packed bytes of FRE data, so that
// lowering does not copy the lists as they grow.
func newResult(t Target, opt Options, n, packed int, scanned bool) *Result {
	sec := &emit.Section{Header: t.Header()}
	sec.FREData = make([]byte, 0, packed)
	sec.Index = make([]emit.IndexEntry, 0, n)
	r := &Result{Section: sec, Starts: make([]uint64, 0, n)}
	if opt.ShareFREs && opt.Version != emit.Version2 && (opt.MergeFDEs == MergeNone || t.Relocatable) {
		// (A version 2 section is shared once converted, one whose
		// FDEs are merged once merged.)
		r.shareRoom = n
	}
	if !scanned {
		r.Sources = make([]*cfi.FDE, 0, n)
	}
	return r
}

// rangeLowerer lowers functions one after the other, each with the same
// Lowerer, and appends them to res: the loop of lowerRange and
// lowerScanRange.
type rangeLowerer struct {
	res  *Result
	l    *Lowerer
	t    Target
	opt  Options
	fast bool // the fast path may translate
	// m is the memo, nil until the first function the fast path
	// leaves (libLLVM.so has none: no table made); memoHint sizes
	// it, -1 without memo.
	m        *memo
	memoHint int
	frames   *cfi.Frames
	// scanned is true when each FDE is the caller's variable, reused for
	// the next one: a Skip gets a copy, Sources stay empty.
	scanned bool
}

// newRangeLowerer returns a rangeLowerer of about n FDEs into res.
func newRangeLowerer(res *Result, frames *cfi.Frames, n int, t Target, opt Options, scanned bool) (*rangeLowerer, error) {
	l, err := NewLowerer(frames, t, opt)
	if err != nil {
		return nil, err
	}
	r := &rangeLowerer{res: res, l: l, t: t, opt: opt, fast: l.fastUsable(), scanned: scanned, frames: frames, memoHint: -1}
	if !opt.noMemo {
		// Two functions in three repeat an earlier one's CFI; with the
		// fast path, the memo sees only the few it leaves (it grows if
		// need be).
		r.memoHint = n / 2
		if r.fast {
			r.memoHint = n / 32
		}
	}
	return r, nil
}

// memo returns r's memo, made at its first call, or nil without one.
func (r *rangeLowerer) memo() *memo {
	if r.m == nil && r.memoHint >= 0 {
		r.m = newMemo(r.frames, r.memoHint)
		if r.m == nil {
			r.memoHint = -1 // the section is too big for a memo
		}
	}
	return r.m
}

// lowerRange lowers fdes, in order, with a Lowerer of its own and appends
// them to res.
func lowerRange(res *Result, frames *cfi.Frames, fdes []*cfi.FDE, t Target, opt Options) error {
	r, err := newRangeLowerer(res, frames, len(fdes), t, opt, false)
	if err != nil {
		return err
	}
	for _, f := range fdes {
		if err := r.lower(f); err != nil {
			return err
		}
	}
	return nil
}

// skip records that f has no SFrame FDE.
func (r *rangeLowerer) skip(s Skip) {
	if r.scanned {
		f := *s.FDE
		if r.opt.MappedCFI && f.CIE != nil {
			// Nothing of the result may point into the mapping.
			cie := *f.CIE
			cie.Initial, f.Instructions, f.CIE = nil, nil, &cie
		}
		s.FDE = &f
	}
	r.res.Skipped = append(r.res.Skipped, s)
}

// lower lowers f and appends it to r.res.
func (r *rangeLowerer) lower(f *cfi.FDE) error {
	res, l, t, opt := r.res, r.l, &r.t, &r.opt // (pointers: no copy of either at every function)
	sec := res.Section
	l.recycle() // the FREs of the last function are encoded
	if t.Relocatable && f.Section <= 0 {
		// Without the section of the function there is nothing for
		// the start field's relocation to refer to.
		r.skip(Skip{FDE: f, Reason: "function start has no relocation to a section"})
		return nil
	}
	if !t.Relocatable && !opt.GasCompat && f.Size == 0 {
		return nil
	}
	i := sec.NumFDEs()
	if r.fast {
		if ok, err := l.lowerFast(f, sec); ok {
			if err != nil {
				return fmt.Errorf("function at %#x: %w", f.Start, err)
			}
			res.fast++
			return r.appendFunction(f, i)
		}
	}
	m := r.memo()
	var key uint64
	if m != nil && memoable(f) {
		key = m.hash(f)
		if j, ok := m.lookup(key, f); ok {
			if err := sec.AppendCopy(j, uint32(f.Size)); err != nil {
				return fmt.Errorf("function at %#x: %w", f.Start, err)
			}
			res.copied++
			return r.appendFunction(f, i)
		}
	}
	fde, skip := l.Function(f)
	if skip != nil {
		r.skip(*skip)
		if !skip.Emitted {
			return nil
		}
	}
	if err := sec.AppendFDE(fde); err != nil {
		return fmt.Errorf("function at %#x: %w", f.Start, err)
	}
	if m != nil && memoable(f) && skip == nil && !l.x.setLoc {
		m.add(key, f, i, l.x.pc)
	}
	return r.appendFunction(f, i)
}

// appendFunction records that FDE i of the section was lowered from f:
// its start, its source (unless scanned) and, in an object, its
// relocation. With Options.NarrowFREs it narrows the FDE's FRE type.
func (r *rangeLowerer) appendFunction(f *cfi.FDE, i int) error {
	res := r.res
	if r.opt.narrow() {
		// The function's record is the last of the FRE data: lowered
		// or copied just now, not shared yet.
		if err := res.Section.NarrowLast(i); err != nil {
			return fmt.Errorf("function at %#x: %w", f.Start, err)
		}
	}
	res.Starts = append(res.Starts, f.Start)
	if !r.scanned {
		res.Sources = append(res.Sources, f)
	}
	if r.t.Relocatable {
		res.Relocs = append(res.Relocs, Reloc{
			Offset:  uint64(res.Section.FieldOffset(i)),
			Type:    r.t.RelocType(),
			Section: f.Section,
			Addend:  int64(f.Start),
		})
	}
	return nil
}
