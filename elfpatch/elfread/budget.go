package elfread

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// MemoryReserve is the part of a MemoryBudget kept for the process itself
// (its code, runtime and stacks: 6 MB at rest) and for the garbage
// collector's overshoot: the files share the rest.
const MemoryReserve = 32 << 20

// MemoryBudget shares a number of bytes between the files processed at
// once (the sframe-gen command's --memory-limit). Files are served in the
// order they ask, so a big file waiting is not passed by a stream of
// small ones. A nil *MemoryBudget is unlimited. Its methods may be
// called from several goroutines at once.
type MemoryBudget struct {
	limit int64 // as given
	mu    sync.Mutex
	free  int64
	queue []*memoryWaiter
}

type memoryWaiter struct {
	n     int64
	ready chan struct{}
}

// NewMemoryBudget returns a budget of limit bytes, MemoryReserve of them
// kept for the process.
func NewMemoryBudget(limit int64) *MemoryBudget {
	return &MemoryBudget{limit: limit, free: limit - MemoryReserve}
}

// Limit returns the limit the budget was made with (0: unlimited).
func (b *MemoryBudget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// OverBudgetError is a charge more than a whole budget: a file that would
// need more memory than the limit allows.
type OverBudgetError struct {
	Need, Limit int64
	// What says what makes the need up.
	What string
}

// Error says what is needed, why, and the limit.
func (e *OverBudgetError) Error() string {
	if e.Need >= 1<<60 {
		return fmt.Sprintf("needs more memory than any limit (%s), over the memory limit of %s (--memory-limit)", e.What, FormatSize(e.Limit))
	}
	need, limit := FormatSize(e.Need), FormatSize(e.Limit)
	if strings.Replace(need, ".0 ", " ", 1) == limit {
		// Close enough to print alike: in MiB, rounded up and down.
		need, limit = fmt.Sprintf("%d MiB", (e.Need+1<<20-1)>>20), fmt.Sprintf("%d MiB", e.Limit>>20)
	}
	return fmt.Sprintf("needs about %s of memory (%s), over the memory limit of %s (--memory-limit)", need, e.What, limit)
}

// Acquire takes n bytes of the budget for work described by what (for the
// message), waiting for them while other files hold them; a request
// larger than the budget fails at once with an *OverBudgetError.
func (b *MemoryBudget) Acquire(n int64, what string) error {
	if b == nil {
		return nil
	}
	if n > b.limit-MemoryReserve || n < 0 {
		if n < 0 {
			n = 1 << 62
		}
		return &OverBudgetError{Need: min(n, 1<<62-MemoryReserve) + MemoryReserve, Limit: b.limit, What: what}
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

// Release gives back n bytes acquired before, and serves the files
// waiting, in order, as far as they fit.
func (b *MemoryBudget) Release(n int64) {
	if b == nil || n == 0 {
		return
	}
	if n >= (b.limit-MemoryReserve)/4 {
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

// A Meter charges what one reader of files allocates, step by step, to a
// MemoryBudget, and gives it all back at once: the read commands
// (dump, verify, stats, rows, stack) charge each file's headers, symbol
// tables, SFrame and CFI sections before they read them. A nil *Meter
// charges nothing (no limit), but the sizes are still checked against
// the file.
type Meter struct {
	b         *MemoryBudget
	heldBytes int64
	charge    func(Cost) error // ChargeTo's
}

// Cost is memory a read takes, charged before it is allocated.
type Cost struct {
	Bytes int64
	// What says what makes the cost up, for a message when it is too
	// much.
	What string
}

// ChargeTo returns a Meter that passes each charge to charge, for a
// caller that accounts for the memory its own way (the root package's
// Generator, which admits each charge to its Resources too). Release and
// ReleaseTo give nothing back: charge's caller does.
func ChargeTo(charge func(Cost) error) *Meter { return &Meter{charge: charge} }

// NewMeter returns a Meter charging b (nil: unlimited).
func NewMeter(b *MemoryBudget) *Meter { return &Meter{b: b} }

// Charge takes c from the budget, to be given back by Release: what the
// Meter holds already counts, so that a file needing more than the whole
// budget in all fails with an *OverBudgetError naming the sum. It waits
// while other Meters of the budget hold what it needs.
func (m *Meter) Charge(c Cost) error {
	if m != nil && m.charge != nil {
		return m.charge(c)
	}
	if m == nil || m.b == nil || c.Bytes == 0 {
		return nil
	}
	if c.Bytes < 0 || c.Bytes > m.b.limit-MemoryReserve-m.heldBytes {
		need := int64(1 << 62)
		if c.Bytes >= 0 && c.Bytes < need-m.heldBytes-MemoryReserve {
			need = m.heldBytes + c.Bytes + MemoryReserve
		}
		return &OverBudgetError{Need: need, Limit: m.b.limit, What: c.What}
	}
	if err := m.b.Acquire(c.Bytes, c.What); err != nil {
		return err
	}
	m.heldBytes += c.Bytes
	return nil
}

// Release gives back everything charged so far.
func (m *Meter) Release() {
	if m == nil {
		return
	}
	m.b.Release(m.heldBytes)
	m.heldBytes = 0
}

// Held is what m holds, a mark for ReleaseTo.
func (m *Meter) Held() int64 {
	if m == nil {
		return 0
	}
	return m.heldBytes
}

// ReleaseTo gives back what was charged since m held mark (what was
// read since is garbage).
func (m *Meter) ReleaseTo(mark int64) {
	if m == nil || m.heldBytes <= mark {
		return
	}
	m.b.Release(m.heldBytes - mark)
	m.heldBytes = mark
}

// FormatSize prints a byte count in the largest binary unit it reaches.
func FormatSize(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
