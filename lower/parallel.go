package lower

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// part is one contiguous piece of the functions lowerParallel lowers:
// at most fdes FDEs, about packed bytes of packed FRE data, lowered by run
// into the Result it is given.
type part struct {
	fdes, packed int
	run          func(p *Result) error
}

// partLists is the Result of one part of lowerParallel and its Section,
// padded to keep other objects off their cache lines.
type partLists struct {
	_   [cacheLine]byte
	res Result
	sec emit.Section
	_   [cacheLine]byte
}

// cacheLine is the size of a cache line (of x86-64, arm64: 64 bytes; 128
// is what Go's own padding uses for the prefetched pairs of lines).
const cacheLine = 128

// partsPerWorker is how many parts lowerParallel's callers cut the
// functions into per worker, at least: when one worker is slowed down (on
// a virtual machine, its CPU taken by the host for a while), the others
// take more parts instead of waiting for it.
const partsPerWorker = 4

// partWeights returns the relative sizes of the parts LowerScan cuts a
// section of size bytes into for workers workers. A small section is cut
// into partsPerWorker rounds of one part per worker, each round's parts
// smaller than the round's before (4, 3, 2, 1), so that the last parts,
// whose end the other workers may wait for, are short. (With 8 parts of
// one size, one of two workers waited 1.6 ms on average at the end of a
// run on libLLVM.so, 8 traced runs.) A big one is cut into parts of one
// size, about partBytes each: the last parts are short, and the FRE data
// buffers the parts hand on (frePool) small.
func partWeights(workers, size int) []int {
	if n := (size + partBytes - 1) / partBytes; n > workers*partsPerWorker {
		return slices.Repeat([]int{1}, n)
	}
	weights := make([]int, 0, workers*partsPerWorker)
	for round := partsPerWorker; round > 0; round-- {
		for range workers {
			weights = append(weights, round)
		}
	}
	return weights
}

// partBytes is about how many bytes of CFI a part of a big section holds
// (partWeights). On libLLVM.so (7.7 MB of CFI, 30 parts), a --raw run
// takes about 3,800 page faults instead of 4,450 with 8 parts, at the same
// CPU time; parts of 64 KiB took 3.6 ms more of it (the merge of 120 sorted
// runs, each part's setup) for no fewer faults.
const partBytes = 256 << 10

// lowerParallel lowers parts on workers goroutines, each part with a
// Lowerer of its own (functions are lowered independently), the next part
// going to the first goroutine free, then joins them in order: the result
// is the one lowering them one after the other gives. res must be empty,
// with room for the FDEs of all parts. Each part fills a window of res's
// index and starts, sized for it, and writes its FRE data in a buffer of
// its own, which the parts joined before it hand on (frePool); the join
// moves the lists down over the gaps and appends (or shares) the FRE
// data, so that lowering in parallel takes little more memory than
// serially; it joins each part as soon as it can, while the other workers
// go on. With hold not nil, the second worker starts taking parts once
// hold is closed (or when every part is taken: it then has nothing to do).
// It reports false, res then unusable, when some part failed.
func lowerParallel(res *Result, t Target, parts []part, workers int, hold <-chan struct{}) bool {
	pl := newParallelLowering(res, t, parts)
	pl.work(workers, hold)
	pl.join()
	if pl.runs != nil && !pl.runs.failed {
		res.runs = pl.runs
	}
	return pl.ok && pl.joined == len(parts)
}

// parallelLowering is the state of one lowerParallel: the parts, the
// Result each is lowered into (a window of res's lists), and the join of
// the lowered parts into res, in order.
type parallelLowering struct {
	res     *Result
	t       Target
	parts   []part
	results []*Result
	errs    []error
	buffers frePool       // the parts' FRE data buffers, handed on once joined
	at      []int         // where each part's lists start in res's
	runs    *sortedRuns   // a linked file's: the parts' starts sorted by the workers
	sorted  []bool        // set with lowered: the part's run is sorted
	lowered []atomic.Bool // set once results[k] and errs[k] are written

	joining sync.Mutex
	joined  int  // parts joined, under joining
	ok      bool // no part failed, under joining
}

// newParallelLowering gives each part its window of res's lists, then
// empties res's lists for the join.
func newParallelLowering(res *Result, t Target, parts []part) *parallelLowering {
	sec := res.Section
	pl := &parallelLowering{
		res: res, t: t, parts: parts,
		results: make([]*Result, len(parts)),
		errs:    make([]error, len(parts)),
		at:      make([]int, len(parts)),
		sorted:  make([]bool, len(parts)),
		lowered: make([]atomic.Bool, len(parts)),
		ok:      true,
	}
	if !t.Relocatable && sec.Header.Version != emit.Version2 {
		// A linked file's section is sorted by start: each worker
		// sorts the parts it lowers.
		pl.runs = newSortedRuns(len(parts), cap(res.Starts), emit.HeaderSize+len(sec.Header.AuxHeader))
	}
	lo := 0
	for k, pt := range parts {
		pl.at[k] = lo
		hi := lo + pt.fdes
		// Each part's Result and Section, written at every function,
		// on cache lines of their own: parts next to each other in
		// memory, lowered on two CPUs, would take the lines from each
		// other at every write.
		own := &partLists{}
		p := &own.res
		p.Section, p.Starts = &own.sec, res.Starts[lo:lo:hi]
		own.sec = emit.Section{Header: sec.Header}
		if res.Sources != nil {
			p.Sources = res.Sources[lo:lo:hi]
		}
		p.Section.Index = sec.Index[lo:lo:hi]
		lo = hi
		pl.results[k] = p
	}
	sec.Index, sec.FREData, res.Starts = sec.Index[:0], sec.FREData[:0], res.Starts[:0]
	if res.Sources != nil {
		res.Sources = res.Sources[:0]
	}
	return pl
}

// work lowers the parts on workers goroutines, the next part going to the
// first one free; a worker that finishes a part joins what it can, unless
// another one is joining already. The first worker left without a part
// while another lowers the last ones faults in the memory of the order
// EncodeThenPlace will merge the runs into, until the last one is done.
func (pl *parallelLowering) work(workers int, hold <-chan struct{}) {
	var next atomic.Int64
	allTaken := make(chan struct{})
	var wg sync.WaitGroup
	var busy atomic.Int64       // workers still taking parts
	var done atomic.Bool        // set when none is
	var prefaulting atomic.Bool // one worker faults the order's pages in
	n := min(workers, len(pl.parts))
	busy.Store(int64(n))
	// leave counts a worker out of those taking parts: the last one out
	// stops the prefault; the first one out while another still lowers
	// does it.
	leave := func(prefault bool) {
		if busy.Add(-1) == 0 {
			done.Store(true)
		} else if prefault && pl.runs != nil && prefaulting.CompareAndSwap(false, true) {
			pl.runs.prefaultOrder(&done)
		}
	}
	for w := range n {
		wg.Go(func() {
			if w == 1 && hold != nil {
				select {
				case <-hold:
				case <-allTaken:
					// Held until every part was taken: its CPU
					// was the copy's.
					leave(false)
					return
				}
			}
			for k := int(next.Add(1) - 1); k < len(pl.parts); k = int(next.Add(1) - 1) {
				if k == len(pl.parts)-1 {
					close(allTaken)
				}
				pl.lower(k)
				if pl.joining.TryLock() {
					pl.join()
					pl.joining.Unlock()
				}
			}
			leave(true)
		})
	}
	wg.Wait()
}

// lower lowers part k into its Result, its FRE data in a buffer of the
// pool, and sorts its starts.
func (pl *parallelLowering) lower(k int) {
	p := pl.results[k]
	p.Section.FREData = pl.buffers.take(pl.parts[k].packed)
	pl.errs[k] = pl.parts[k].run(p)
	if starts := p.Starts; pl.runs != nil && pl.errs[k] == nil && len(starts) <= pl.parts[k].fdes {
		if vals, tmp := pl.runs.window(pl.at[k], len(starts)); vals != nil {
			pl.sorted[k] = pl.runs.sortRun(k, starts, vals, tmp)
		}
	}
	pl.lowered[k].Store(true)
}

// join appends the parts to res in order, each once it and those before it
// are lowered: a part's index and starts move down over the gaps left by
// the windows before it, its FRE data is appended (shared) to res's and
// its buffer goes back to the pool. It stops at the first part not
// lowered yet (what is left is joined by the next call) or failed.
func (pl *parallelLowering) join() {
	res := pl.res
	for pl.ok && pl.joined < len(pl.parts) && pl.lowered[pl.joined].Load() {
		k := pl.joined
		p := pl.results[k]
		if pl.errs[k] != nil {
			pl.ok = false
			return
		}
		if pl.runs != nil {
			if pl.sorted[k] {
				pl.runs.runs = append(pl.runs.runs, sortedRun{at: pl.at[k], n: len(p.Starts), first: len(res.Starts)})
			} else {
				pl.runs.failed = true
			}
		}
		if !res.appendResult(p, pl.t) {
			pl.ok = false
			return
		}
		pl.buffers.give(p.Section.FREData)
		p.Section.FREData = nil
		pl.joined++
	}
}

// frePool holds the FRE data buffers of the parts joined, for the parts
// lowered next: the pages of a buffer are faulted in by its first part,
// and the FRE data of all the parts takes only the pages of res's (shared)
// FRE data and of the few buffers in use at once, not those of every
// part's records before they are shared. Fresh pages are dear on virtual
// machines (docs/performance.md).
type frePool struct {
	mu   sync.Mutex
	free [][]byte
}

// take returns an empty buffer with room for at least size bytes: the
// last one given back, or a new one with room to spare (its pages are
// faulted in only as far as they are written).
func (fp *frePool) take(size int) []byte {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	for i := len(fp.free) - 1; i >= 0; i-- {
		if b := fp.free[i]; cap(b) >= size {
			fp.free = slices.Delete(fp.free, i, i+1)
			return b[:0]
		}
	}
	return make([]byte, 0, 2*size)
}

// give hands b back to the pool.
func (fp *frePool) give(b []byte) {
	if cap(b) == 0 {
		return
	}
	fp.mu.Lock()
	fp.free = append(fp.free, b[:0])
	fp.mu.Unlock()
}

// chunks cuts frames.FDEs into n contiguous parts for lowerParallel.
func chunks(frames *cfi.Frames, t Target, opt Options, n int) []part {
	fdes := frames.FDEs
	parts := make([]part, n)
	for k := range parts {
		chunk := fdes[k*len(fdes)/n : (k+1)*len(fdes)/n]
		parts[k] = part{fdes: len(chunk), packed: packedSize(chunk), run: func(p *Result) error {
			return lowerRange(p, frames, chunk, t, opt)
		}}
	}
	return parts
}

// appendResult appends the functions of p, lowered after those of r, to
// r (p's lists may lie in r's arrays past r's ends: they move down). FRE offsets and relocation offsets
// shift by what r holds; with r's sharer, p's FRE data is shared as it
// is appended. It reports false when the packed FRE data would pass what
// a 32-bit offset can address, or when sharing fails.
func (r *Result) appendResult(p *Result, t Target) bool {
	sec, psec := r.Section, p.Section
	base := uint64(len(sec.FREData))
	if base+uint64(len(psec.FREData)) > 1<<32-1 {
		return false
	}
	if t.Relocatable {
		n := sec.NumFDEs()
		for i, rel := range p.Relocs[:psec.NumFDEs()] {
			rel.Offset = uint64(sec.FieldOffset(n + i))
			r.Relocs = append(r.Relocs, rel)
		}
	}
	if r.shareRoom > 0 {
		// Shared as it joins, while the other workers go on lowering
		// (the PLT FDEs appended after, at the end): p's records are
		// read where its worker wrote them, and only those not shared
		// are copied. The table is made (its pages faulted in) here,
		// by a worker, not before the workers start.
		if r.sharer == nil {
			r.sharer = emit.NewFRESharer(r.shareRoom)
		}
		sec.Index = appendInPlace(sec.Index, psec.Index)
		n, err := r.sharer.Append(sec, len(psec.Index), psec.FREData)
		if err != nil {
			return false
		}
		r.Shared += n
	} else {
		for _, e := range psec.Index {
			e.FREOffset += uint32(base)
			sec.Index = append(sec.Index, e)
		}
		sec.FREData = appendInPlace(sec.FREData, psec.FREData)
	}
	sec.FRECount += psec.FRECount
	r.Starts = appendInPlace(r.Starts, p.Starts)
	if r.Sources != nil {
		r.Sources = appendInPlace(r.Sources, p.Sources)
	}
	r.Skipped = append(r.Skipped, p.Skipped...)
	r.copied += p.copied
	r.fast += p.fast
	return true
}

// appendInPlace is append(dst, src...) for a src that may lie in dst's
// array past its end (a part's window): when src starts where dst ends,
// it is in place already and nothing is copied (append would copy it
// onto itself: 3.8 MB of index and starts on libLLVM.so).
func appendInPlace[T any](dst, src []T) []T {
	if len(src) > 0 && len(dst) < cap(dst) && &dst[:len(dst)+1][len(dst)] == &src[0] {
		return dst[:len(dst)+len(src)]
	}
	return append(dst, src...)
}
