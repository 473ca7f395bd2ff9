package lower

import (
	"slices"
	"sync"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// lowerParallel lowers frames.FDEs in opt.Workers contiguous chunks at
// once, each with a Lowerer of its own (functions are lowered
// independently), then joins them in order: the result is the one
// lowerRange gives for the whole list. res must be empty, made by
// newResult for frames.FDEs. Each chunk fills a window of res's lists,
// sized for the chunk (for the FRE data, from its estimate; a chunk that
// needs more gets its own), and the join moves them down over the gaps,
// so that lowering in parallel takes no more memory than serially. It
// reports false, res then unusable, when some chunk failed.
func lowerParallel(res *Result, frames *cfi.Frames, t Target, opt Options) bool {
	fdes := frames.FDEs
	sec := res.Section
	parts := make([]*Result, opt.Workers)
	errs := make([]error, opt.Workers)
	packedAt := 0
	windows := make([]int, len(parts)+1) // where each chunk's FRE data starts in sec.Packed
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := k*len(fdes)/len(parts), (k+1)*len(fdes)/len(parts)
		chunk := fdes[lo:hi]
		p := &Result{
			Section: &emit.Section{Header: sec.Header, FDEs: sec.FDEs[lo:lo:hi]},
			Starts:  res.Starts[lo:lo:hi],
			Sources: res.Sources[lo:lo:hi],
		}
		if sec.Packed != nil {
			n := packedSize(chunk)
			p.Section.Packed = sec.Packed[packedAt : packedAt : packedAt+n]
			packedAt += n
		}
		windows[k+1] = packedAt
		parts[k] = p
		wg.Go(func() { errs[k] = lowerRange(p, frames, chunk, t, opt) })
	}
	wg.Wait()
	sec.FDEs, res.Starts, res.Sources = sec.FDEs[:0], res.Starts[:0], res.Sources[:0]
	if sec.Packed != nil {
		sec.Packed = sec.Packed[:0]
	}
	for k, p := range parts {
		if errs[k] != nil {
			return false
		}
		// A chunk that outgrew its window (in an array of its own) moves
		// down over the windows of the next ones: save what it covers.
		end := len(sec.Packed) + len(p.Section.Packed)
		for j := k + 1; j < len(parts) && windows[j] < end; j++ {
			parts[j].Section.Packed = slices.Clone(parts[j].Section.Packed)
		}
		if !res.appendResult(p, t) {
			return false
		}
	}
	return true
}

// appendResult appends the functions of p, lowered after those of r, to
// r (p's lists may lie in r's arrays past r's ends: they move down). FRE offsets (or, unpacked, ordering keys) and relocation offsets
// shift by what r holds. It reports false when the packed FRE data would
// pass what a 32-bit offset can address.
func (r *Result) appendResult(p *Result, t Target) bool {
	sec, psec := r.Section, p.Section
	base := uint64(len(sec.FDEs))
	if sec.Packed != nil {
		base = uint64(len(sec.Packed))
	}
	if base+uint64(len(psec.Packed)) > 1<<32-1 {
		return false
	}
	for i, f := range psec.FDEs {
		f.FREOffset += uint32(base)
		if t.Relocatable {
			rel := p.Relocs[i]
			rel.Offset = uint64(sec.FieldOffset(len(sec.FDEs)))
			r.Relocs = append(r.Relocs, rel)
		}
		sec.FDEs = append(sec.FDEs, f)
	}
	if sec.Packed != nil {
		sec.Packed = append(sec.Packed, psec.Packed...)
		sec.PackedFREs += psec.PackedFREs
	}
	r.Starts = append(r.Starts, p.Starts...)
	r.Sources = append(r.Sources, p.Sources...)
	r.Skipped = append(r.Skipped, p.Skipped...)
	r.copied += p.copied
	r.fast += p.fast
	return true
}
