package lower

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/sframe-gen/sframe-gen/emit"
)

// sortedRuns is, for a linked file's Result lowered in parts, each part's
// functions sorted by start (a run), which EncodeThenPlace merges instead of
// sorting all the functions at once: each part is sorted by the worker
// that lowered it, in parallel with the others and while the part's starts
// are in that CPU's caches, and the merge reads and writes memory once, in
// order, where a sort of the whole passes over it four times.
//
// A run's values are start<<shift | run<<idxBits | the function's index in
// its run: ordered as EncodeThenPlace orders the functions when the starts,
// taken as signed offsets from the section, keep their unsigned order (by
// start, ties in index order, runs being in index order). The runs are a
// hint: EncodeThenPlace checks the order they give as it writes the index
// (emit.ErrNotSorted), and sorts the functions itself when it is wrong
// (the starts of the result changed, or some start is not where the
// section's address keeps their order).
//
// The runs and the sort's other half are in the memory EncodeThenPlace
// writes the index in (mem: the runs in its first words, the other half
// after them; the merged order goes in its last words), so that the
// workers, not EncodeThenPlace, take its page faults.
type sortedRuns struct {
	mem     []int       // EncodeThenPlace's memory, for at most room functions
	room    int         // the functions mem has room for
	runs    []sortedRun // in index order
	idxBits int         // the bits of an index in a run
	shift   int         // where a value's start begins
	failed  bool        // some part's starts did not fit the values
}

// sortedRun is one part's values, sortedRuns.mem[at:at+n], and the index
// in the Result of its first function.
type sortedRun struct {
	at, n, first int
}

// newSortedRuns returns the runs of at most parts parts (and one more, the
// functions added after them) of at most n functions in all, in memory for
// EncodeThenPlace's index of n functions after head bytes, or nil when the
// values would leave starts fewer than 31 bits.
func newSortedRuns(parts, n, head int) *sortedRuns {
	idxBits := bits.Len(uint(n))
	shift := idxBits + bits.Len(uint(parts))
	if shift > bits.UintSize-32 { // a value is an int: none on 32-bit systems
		return nil
	}
	words := (head+emit.FDEIndexEntrySize*n+intBytes-1)/intBytes + n // at least 3n: runs, the other half, the order
	return &sortedRuns{mem: make([]int, words), room: n, runs: make([]sortedRun, 0, parts+1), idxBits: idxBits, shift: shift}
}

// window returns where the values of a run of n functions at at go, and
// the radix sort's other half for them (nil past the room of mem): the
// first and second room words of mem, which EncodeThenPlace's index covers
// (16 bytes a function) but not its order (its last words).
func (s *sortedRuns) window(at, n int) (vals, tmp []int) {
	if at < 0 || n < 0 || at+n > s.room {
		return nil, nil
	}
	return s.mem[at : at+n], s.mem[s.room+at : s.room+at+n]
}

// prefaultOrder writes a zero into each 4 KiB page of the words where
// order (EncodeThenPlace's) puts the order of the functions, the last
// words of mem, from the end down, until stop is set: fresh pages are
// dear (2 us each on this project's virtual machine), and a worker with
// no part left to lower has the time while another lowers the last ones.
func (s *sortedRuns) prefaultOrder(stop *atomic.Bool) {
	const perPage = 4096 / intBytes
	for i := len(s.mem) - 1; i >= len(s.mem)-s.room && !stop.Load(); i -= perPage {
		s.mem[i] = 0
	}
}

// maxRunDigit is the radix sort's largest digit, maxRunPasses its most
// passes: it sorts the starts of a part spread over up to 8 GiB of code
// (their common low zero bits left out).
const (
	maxRunDigit  = 11
	maxRunPasses = 3
)

// sortRun sorts starts, those of run k, into vals (as long as starts),
// with tmp (as long too) for the radix sort's other half. It reports
// false when some start does not fit a value, or the starts are spread
// too far apart.
func (s *sortedRuns) sortRun(k int, starts []uint64, vals, tmp []int) bool {
	n := len(starts)
	if n == 0 {
		return true
	}
	// The bits in which the starts differ from the first, whose lowest
	// one is the lowest that is not zero in every start-lo.
	lo, hi, diff := starts[0], starts[0], uint64(0)
	for _, v := range starts {
		lo, hi, diff = min(lo, v), max(hi, v), diff|(v^starts[0])
	}
	low := bits.TrailingZeros64(diff | 1<<63)
	keyBits := bits.Len64((hi - lo) >> low)
	if hi>>(bits.UintSize-1-s.shift) != 0 || keyBits > maxRunPasses*maxRunDigit {
		return false
	}
	// Radix sort, least significant digit first, on the bits of start-lo
	// from low (stable: equal starts keep the index order); the last
	// pass adds lo back. The digits of every pass are counted at once,
	// as the values are made, in the list where an odd number of passes
	// leaves them in vals.
	passes := (keyBits + maxRunDigit - 1) / maxRunDigit
	src, dst := vals, tmp
	if passes%2 == 1 {
		src, dst = tmp, vals
	}
	if passes == 0 {
		for i := range src {
			src[i] = int(lo<<s.shift) | k<<s.idxBits | i
		}
		return true
	}
	digit := (keyBits + passes - 1) / passes
	mask := uint64(1)<<digit - 1
	var count [maxRunPasses][1<<maxRunDigit + 1]int
	tag := k << s.idxBits
	for i, v := range starts {
		key := (v - lo) >> low
		src[i] = int((v-lo)<<s.shift) | tag | i
		count[0][key&mask+1]++
		count[1][key>>digit&mask+1]++
		count[2][key>>(2*digit)&mask+1]++
	}
	for pass := range passes {
		c := &count[pass]
		for d := 1; d <= int(mask)+1; d++ {
			c[d] += c[d-1]
		}
		shift := s.shift + low + pass*digit
		add := 0
		if pass == passes-1 {
			add = int(lo << s.shift)
		}
		scatter(dst, src, c, shift, int(mask), add)
		src, dst = dst, src
	}
	return true
}

// scatter is a pass of sortRun's: each value of src, plus add, goes to
// dst at the place of its digit (v>>shift&mask) in count, which moves on.
// (A function of its own, the loop's values stay in registers.)
func scatter(dst, src []int, count *[1<<maxRunDigit + 1]int, shift, mask, add int) {
	for _, v := range src {
		d := v >> shift & mask
		dst[count[d]] = v + add
		count[d]++
	}
}

// order merges the runs into the order of the n functions of starts, in
// the last n words of mem when it has them (else in memory of its own):
// the functions of the runs and, after them, those starts has beyond them
// (the PLT's, added after lowering), sorted here. It returns nil when the
// runs do not cover the first functions of starts one after the other.
func (s *sortedRuns) order(starts []uint64, mem []int) []int {
	n := len(starts)
	covered := 0
	runs := make([][]int, 0, len(s.runs)+1)
	first := make([]int, 0, len(s.runs)+1)
	for _, r := range s.runs {
		vals, _ := s.window(r.at, r.n)
		if r.first != covered || vals == nil {
			return nil
		}
		runs, first = append(runs, vals), append(first, r.first)
		covered += r.n
	}
	if s.failed || covered > n || n-covered >= 1<<s.idxBits {
		return nil
	}
	if tail := starts[covered:]; len(tail) > 0 {
		k := len(s.runs)
		vals := make([]int, len(tail))
		for i, v := range tail {
			if v>>(63-s.shift) != 0 {
				return nil
			}
			vals[i] = int(v<<s.shift) | k<<s.idxBits | i
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
func mergeRuns(runs [][]int, first []int, order []int, mask int) {
	j := 0
	for {
		// The run whose next value is the least goes on until its next
		// value passes the least of the other runs' (the runs of a
		// linked file's parts interleave rarely: long stretches of one
		// run at a time). Values are not negative.
		best, least, next := -1, math.MaxInt, math.MaxInt
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
			order[j] = base + r[k]&mask
			j++
			k++
		}
		runs[best] = r[k:]
	}
}
