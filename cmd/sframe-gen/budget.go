package main

import (
	"debug/elf"
	"fmt"
	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/cfi"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The memory budget of a generate run (--memory-limit): the files being
// processed at once, by all the workers of the batch form or by the
// single-file form, hold at most that much. Each file is charged an
// estimate of its peak (sframegen.Cost) before its CFI or contents are read: a
// file alone over the budget fails with a message naming both, and in the
// batch form a file waits until the files before it give back enough
// (docs/robustness.md).

// maxDefaultMemory caps the default budget: a build machine runs other
// jobs beside sframe-gen, and 2 GiB is eight times what the biggest file
// measured needs (a 67 MB static archive: 254 MB).
const maxDefaultMemory = 2 << 30

// minMemoryLimit is the smallest --memory-limit: the process itself and
// the smallest file must fit.
const minMemoryLimit = 64 << 20

// processReserve is the part of the budget kept for the process itself
// (its code, runtime and stacks: 6 MB at rest) and for the garbage
// collector's overshoot: the Go heap is limited to the rest, which the
// files share.
const processReserve = 32 << 20

// memoryBudget shares a number of bytes between the files processed at
// once. Files are served in the order they ask, so a big file waiting is
// not passed by a stream of small ones. A nil *memoryBudget is unlimited.
type memoryBudget struct {
	limit int64 // the --memory-limit, as given
	mu    sync.Mutex
	free  int64
	queue []*memoryWaiter
}

type memoryWaiter struct {
	n     int64
	ready chan struct{}
}

// newMemoryBudget returns the budget of a run limited to limit bytes.
func newMemoryBudget(limit int64) *memoryBudget {
	return &memoryBudget{limit: limit, free: limit - processReserve}
}

// overBudgetError is a file whose estimated peak is more than the whole
// budget.
type overBudgetError struct {
	need, limit int64
	what        string
}

func (e *overBudgetError) Error() string {
	need, limit := formatSize(e.need), formatSize(e.limit)
	if strings.Replace(need, ".0 ", " ", 1) == limit {
		// Close enough to print alike: in MiB, rounded up and down.
		need, limit = fmt.Sprintf("%d MiB", (e.need+1<<20-1)>>20), fmt.Sprintf("%d MiB", e.limit>>20)
	}
	return fmt.Sprintf("needs about %s of memory (%s), over the memory limit of %s (--memory-limit)", need, e.what, limit)
}

// acquire takes n bytes of the budget for work described by what (for the
// message), waiting for them while other files hold them; a request
// larger than the budget fails at once.
func (b *memoryBudget) acquire(n int64, what string) error {
	if b == nil {
		return nil
	}
	if n > b.limit-processReserve {
		return &overBudgetError{need: n + processReserve, limit: b.limit, what: what}
	}
	b.mu.Lock()
	if len(b.queue) == 0 && n <= b.free {
		b.free -= n
		b.mu.Unlock()
		return nil
	}
	w := &memoryWaiter{n: n, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()
	<-w.ready
	return nil
}

// release gives back n bytes acquired before, and serves the files
// waiting, in order, as far as they fit.
func (b *memoryBudget) release(n int64) {
	if b == nil || n == 0 {
		return
	}
	if n >= (b.limit-processReserve)/4 {
		// A big file's memory is garbage now: collect it and give it
		// back to the system before the next file takes its share, or
		// the next big file's allocations come on top of it before the
		// collector, paced by the heap's growth, runs (peak RSS of
		// TestMemoryBudget's -j 4 run under 352M: 327-391 MiB without,
		// in three runs).
		debug.FreeOSMemory()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free += n
	for len(b.queue) > 0 && b.queue[0].n <= b.free {
		w := b.queue[0]
		b.free -= w.n
		b.queue = b.queue[1:]
		close(w.ready)
	}
}

// defaultMemoryLimit is half the memory of the machine (or of the control
// group the process runs in, when that is smaller), at most
// maxDefaultMemory and at least minMemoryLimit.
func defaultMemoryLimit() int64 {
	total := int64(maxDefaultMemory) * 2
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil && si.Totalram > 0 {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			total = min(total, n)
		}
	}
	return max(min(total/2, maxDefaultMemory), minMemoryLimit)
}

// sizeValue is a byte count given as a number with an optional binary
// suffix: 512M, 2G, 1.5GiB, 65536.
type sizeValue int64

func (s *sizeValue) String() string { return strings.ReplaceAll(formatSize(int64(*s)), " ", "") }

func (s *sizeValue) Type() string { return "SIZE" }

func (s *sizeValue) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeValue(n)
	return nil
}

// parseSize reads a byte count: a number, then K, M, G or T (powers of
// 1024), optionally followed by "iB" or "B".
func parseSize(v string) (int64, error) {
	num := strings.TrimSpace(v)
	for _, suffix := range []string{"iB", "B"} {
		if strings.HasSuffix(num, suffix) && len(num) > len(suffix) {
			num = strings.TrimSuffix(num, suffix)
			break
		}
	}
	shift := 0
	if k := len(num) - 1; k >= 0 {
		if i := strings.IndexByte("KMGT", num[k]&^0x20); i >= 0 {
			shift, num = 10*(i+1), strings.TrimSpace(num[:k])
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || f*float64(int64(1)<<shift) >= 1<<62 {
		return 0, fmt.Errorf("%q: want a size such as 512M or 2G", v)
	}
	return int64(f * float64(int64(1)<<shift)), nil
}

// formatSize prints a byte count in the largest binary unit it reaches.
func formatSize(n int64) string { return sframegen.FormatSize(n) }

// checkCFIMemory is the budget of the commands that read CFI without a
// --memory-limit (rows, stats, verify): the default one, which a file's
// CFI, read (inflated) and evaluated, must fit.
func checkCFIMemory(f *elf.File, src cfi.Source) error {
	cost := sframegen.CFICost(f, src)
	return newMemoryBudget(defaultMemoryLimit()).acquire(cost.Bytes, cost.What)
}

// admitCFI is the budget of a generator used by a reading command (stats'
// dry run): the default one, which each file must fit.
func admitCFI(cost sframegen.Cost) (func(), error) {
	return func() {}, newMemoryBudget(defaultMemoryLimit()).acquire(cost.Bytes, cost.What)
}
