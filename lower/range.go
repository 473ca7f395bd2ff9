package lower

import (
	"fmt"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// newResult returns an empty result for the functions of fdes, with room
// for n FDEs (and, packed, about their FRE data) so that lowering them
// does not copy the lists as they grow.
func newResult(t Target, opt Options, fdes []*cfi.FDE, n int) *Result {
	sec := &emit.Section{Header: t.Header(), FDEs: make([]emit.FDE, 0, n)}
	if opt.Pack {
		sec.Packed = make([]byte, 0, packedEstimate(fdes))
	}
	return &Result{Section: sec, Starts: make([]uint64, 0, n), Sources: make([]*cfi.FDE, 0, n)}
}

// lowerRange lowers fdes, in order, with a Lowerer of its own and appends
// them to res.
func lowerRange(res *Result, frames *cfi.Frames, fdes []*cfi.FDE, t Target, opt Options) error {
	l, err := NewLowererWith(frames, t, opt)
	if err != nil {
		return err
	}
	sec := res.Section
	fast := l.fastUsable()
	var m *memo
	if opt.Pack && !opt.noMemo {
		// Two functions in three repeat an earlier one's CFI; with the
		// fast path, the memo sees only the few it leaves (it grows if
		// need be).
		hint := len(fdes) / 2
		if fast {
			hint = len(fdes) / 32
		}
		m = newMemo(frames, hint)
	}
	for _, f := range fdes {
		if opt.Pack {
			l.recycle() // the FREs of the last function are packed
		}
		if t.Relocatable && f.Section <= 0 {
			// Without the section of the function there is nothing for
			// the start field's relocation to refer to.
			res.Skipped = append(res.Skipped, Skip{FDE: f, Reason: "function start has no relocation to a section"})
			continue
		}
		if !t.Relocatable && !opt.GasCompat && f.Size == 0 {
			continue
		}
		i := len(sec.FDEs)
		if opt.Pack && fast {
			if ok, err := l.lowerFast(f, sec); ok {
				if err != nil {
					return fmt.Errorf("lower: function at %#x: %w", f.Start, err)
				}
				res.appendFunction(f, sec, i, t)
				res.fast++
				continue
			}
		}
		var key uint64
		if m != nil && memoable(f) {
			key = m.hash(f)
			if j, ok := m.lookup(key, f); ok {
				if err := sec.AppendPackedCopy(j, uint32(f.Size)); err != nil {
					return fmt.Errorf("lower: function at %#x: %w", f.Start, err)
				}
				res.appendFunction(f, sec, i, t)
				res.copied++
				continue
			}
		}
		fde, skip := l.Function(f)
		if skip != nil {
			res.Skipped = append(res.Skipped, *skip)
			if !skip.Emitted {
				continue
			}
		}
		if opt.Pack {
			if err := sec.AppendPacked(fde); err != nil {
				return fmt.Errorf("lower: function at %#x: %w", f.Start, err)
			}
			if m != nil && memoable(f) && skip == nil && !l.x.setLoc {
				m.add(key, f, i, l.x.pc)
			}
		} else {
			fde.FREOffset = uint32(i)
			sec.FDEs = append(sec.FDEs, fde)
		}
		res.appendFunction(f, sec, i, t)
	}
	return nil
}

// appendFunction records that FDE i of sec was lowered from f: its start,
// its source and, in an object, its relocation.
func (r *Result) appendFunction(f *cfi.FDE, sec *emit.Section, i int, t Target) {
	r.Starts = append(r.Starts, f.Start)
	r.Sources = append(r.Sources, f)
	if t.Relocatable {
		r.Relocs = append(r.Relocs, Reloc{
			Offset:  uint64(sec.FieldOffset(i)),
			Type:    t.RelocType(),
			Section: f.Section,
			Addend:  int64(f.Start),
		})
	}
}
