package lower

import (
	"math/bits"
	"slices"
)

// sortedRuns is, for a linked file's Result lowered in parts, each part's
// functions sorted by start (a run), which EncodePlaced merges instead of
// sorting all the functions at once: each part is sorted by the worker
// that lowered it, in parallel with the others and while the part's starts
// are in that CPU's caches, and the merge reads and writes memory once, in
// order, where a sort of the whole passes over it four times.
//
// A run's values are start<<shift | run<<idxBits | the function's index in
// its run: ordered as EncodePlaced orders the functions when the starts,
// taken as signed offsets from the section, keep their unsigned order (by
// start, ties in index order, runs being in index order). The runs are a
// hint: EncodePlaced checks the order they give as it writes the index
// (emit.ErrNotSorted), and sorts the functions itself when it is wrong
// (the starts of the result changed, or some start is not where the
// section's address keeps their order).
type sortedRuns struct {
	vals    []uint64    // the runs' values, each run in its window
	runs    []sortedRun // in index order
	idxBits int         // the bits of an index in a run
	shift   int         // where a value's start begins
	failed  bool        // some part's starts did not fit the values
}

// sortedRun is one part's values, vals[at:at+n] of sortedRuns, and the index in
// the Result of its first function.
type sortedRun struct {
	at, n, first int
}

// newSortedRuns returns the runs of at most parts parts (and one more, the
// functions added after them) of at most n functions in all, or nil when
// the values would leave starts fewer than 32 bits.
func newSortedRuns(parts, n int, huge bool) *sortedRuns {
	idxBits := bits.Len(uint(n))
	shift := idxBits + bits.Len(uint(parts))
	if shift > 32 {
		return nil
	}
	return &sortedRuns{vals: makeBig[uint64](n, n, huge), runs: make([]sortedRun, 0, parts+1), idxBits: idxBits, shift: shift}
}

// runDigit is the radix sort's digit: three passes for the starts of a
// part spread over up to 128 MiB of code.
const runDigit = 11

// sortRun sorts starts, those of run k, into vals (as long as starts),
// with tmp (as long too) for the radix sort's other half. It reports
// false when some start does not fit a value.
func (s *sortedRuns) sortRun(k int, starts []uint64, vals, tmp []uint64) bool {
	n := len(starts)
	if n == 0 {
		return true
	}
	lo, hi := starts[0], starts[0]
	for _, v := range starts {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi>>(64-s.shift) != 0 {
		return false
	}
	// Radix sort, least significant digit first, on the bits of start-lo
	// (stable: equal starts keep the index order); the last pass adds lo
	// back. The values start where an odd number of passes leaves them in
	// vals.
	passes := (bits.Len64(hi-lo) + runDigit - 1) / runDigit
	src, dst := vals, tmp
	if passes%2 == 1 {
		src, dst = tmp, vals
	}
	tag := uint64(k) << s.idxBits
	for i, v := range starts {
		src[i] = (v-lo)<<s.shift | tag | uint64(i)
	}
	if passes == 0 {
		for i := range src {
			src[i] += lo << s.shift
		}
		return true
	}
	for pass := range passes {
		shift := s.shift + pass*runDigit
		var add uint64
		if pass == passes-1 {
			add = lo << s.shift
		}
		var count [1<<runDigit + 1]int
		for _, v := range src {
			count[v>>shift&(1<<runDigit-1)+1]++
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for _, v := range src {
			d := v >> shift & (1<<runDigit - 1)
			dst[count[d]] = v + add
			count[d]++
		}
		src, dst = dst, src
	}
	return true
}

// order merges the runs into the order of the n functions of starts, in
// the last n words of mem when it has them (else in memory of its own):
// the functions of the runs and, after them, those starts has beyond them
// (the PLT's, added after lowering), sorted here. It returns nil when the
// runs do not cover the first functions of starts one after the other.
func (s *sortedRuns) order(starts []uint64, mem []int) []int {
	n := len(starts)
	covered := 0
	for _, r := range s.runs {
		if r.first != covered || r.at+r.n > len(s.vals) {
			return nil
		}
		covered += r.n
	}
	if s.failed || covered > n || n-covered > 1<<s.idxBits {
		return nil
	}
	runs := make([][]uint64, len(s.runs), len(s.runs)+1)
	for k, r := range s.runs {
		runs[k] = s.vals[r.at : r.at+r.n]
	}
	first := make([]int, len(s.runs), len(s.runs)+1)
	for k, r := range s.runs {
		first[k] = r.first
	}
	if tail := starts[covered:]; len(tail) > 0 {
		k := uint64(len(s.runs))
		vals := make([]uint64, len(tail))
		for i, v := range tail {
			if v>>(64-s.shift) != 0 {
				return nil
			}
			vals[i] = v<<s.shift | k<<s.idxBits | uint64(i)
		}
		slices.Sort(vals)
		runs, first = append(runs, vals), append(first, covered)
	}
	var order []int
	if len(mem) >= n {
		order = mem[len(mem)-n:]
	} else {
		order = make([]int, n)
	}
	mergeRuns(runs, first, order, 1<<s.idxBits-1)
	return order
}

// mergeRuns merges runs, sorted lists of values, into order: the index of
// each value in order of value, first[k] plus the value's low bits (mask)
// for a value of run k. order has room for them all.
func mergeRuns(runs [][]uint64, first []int, order []int, mask uint64) {
	j := 0
	for {
		// The run whose next value is the least goes on until its next
		// value passes the least of the other runs' (the runs of a
		// linked file's parts interleave rarely: long stretches of one
		// run at a time).
		best, least, next := -1, ^uint64(0), ^uint64(0)
		for k, r := range runs {
			if len(r) == 0 {
				continue
			}
			if v := r[0]; v < least {
				best, least, next = k, v, least
			} else if v < next {
				next = v
			}
		}
		if best < 0 {
			return
		}
		r, base := runs[best], first[best]
		k := 0
		for k < len(r) && r[k] < next {
			order[j] = base + int(r[k]&mask)
			j++
			k++
		}
		runs[best] = r[k:]
	}
}
