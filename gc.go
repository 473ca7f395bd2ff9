package sframegen

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// collector sets the Go garbage collector to the files a Generator
// processes (Resources.TuneGC); docs/performance.md has what each setting
// saves, measured.
//
// One file (Process, Generate, GenerateAt outside ProcessTree): nearly
// all that generating allocates stays live until it ends (the CFI, the
// section being built), so a collection frees little, and while it marks,
// every pointer write of the lowering pays a write barrier. The
// collector is turned off, up to a heap of oneFileHeap plus
// oneFileFactor times the CFI section's size (the process needs about
// half that), at most maxHeapOff (a size that a damaged header claims
// does not turn it off for good), and within the runtime's memory limit
// (elfread.MemoryBudget.LimitRuntime); it is not turned back on.
//
// A tree (ProcessTree): its files come and go, most of them small, and
// little stays live between them, so a collection at a percent of the
// live heap comes every few MiB, each making the lowering pay write
// barriers while it marks. While only small files are processed, the
// collector is off and the runtime's memory limit triggers it: the heap
// live after the collector's last collection (at first, the walk's list
// of files) plus treeHeapRoom plus the Costs of the small files in flight,
// within the limit set before (elfread.MemoryBudget.LimitRuntime). While
// a file that costs a fourth of treeHeapRoom or more (wide: about 1 MiB
// of CFI) is processed, the collector runs at 100 and the limit is the
// one set before: there most of the heap is live lists. When the last
// wide file is done, a collection runs, and the limit is set from the
// heap it finds live, which no longer holds the wide files' lists.
//
// When the tree is done, the collector gets back the settings it had.
// GOGC or GOMEMLIMIT in the environment leave the collector as they set
// it.
type collector struct {
	mu   sync.Mutex
	tree bool // in ProcessTree
	off  bool // GOGC or GOMEMLIMIT set: the tree's files leave the collector alone
	wide int  // a tree's wide files in flight
	// base is the memory limit before the tree, live the heap live after
	// the collector's last collection, small the Costs of the tree's
	// files in flight that are not wide.
	base, live, small int64
	percent           int // the GC percent before the tree
}

// The collector's settings (collector).
const (
	oneFileHeap   = 256 << 20
	oneFileFactor = 16
	maxHeapOff    = 4 << 30
	treeHeapRoom  = 32 << 20
)

// startTree sets the collector for a tree's files.
func (c *collector) startTree() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tree = true
	c.off = os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""
	if c.off {
		return
	}
	c.base = debug.SetMemoryLimit(-1)
	runtime.GC()
	c.live = heapLive()
	c.percent = debug.SetGCPercent(-1)
	c.limitSmall()
}

// endTree gives the collector back the settings it had before startTree.
func (c *collector) endTree() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tree && !c.off {
		debug.SetGCPercent(c.percent)
		debug.SetMemoryLimit(c.base)
	}
	c.tree, c.wide, c.small = false, 0, 0
}

// limitSmall sets the memory limit of a tree while no wide file is
// processed (collector); c.mu is held.
func (c *collector) limitSmall() {
	debug.SetMemoryLimit(min(c.base, c.live+treeHeapRoom+c.small))
}

// heapLive is the heap the last collection found live.
func heapLive() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(min(s[0].Value.Uint64(), math.MaxInt64/2))
}

// isWide reports whether a tree's file of cost c is wide (collector).
func isWide(c Cost) bool { return c.Bytes >= treeHeapRoom/4 }

// admit sets the collector for a file whose Cost was admitted, and
// returns what to call when the file is done.
func (c *collector) admit(cost Cost) (done func()) {
	none := func() {}
	if c == nil {
		return none
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.tree:
		if cost.CFIBytes > 0 {
			oneFileGC(uint64(cost.CFIBytes))
		}
		return none
	case c.off:
		return none
	case !isWide(cost):
		c.small += cost.Bytes
		if c.wide == 0 {
			c.limitSmall()
		}
		return func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.small -= cost.Bytes
			if c.wide == 0 {
				c.limitSmall()
			}
		}
	}
	if c.wide++; c.wide == 1 {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(c.base)
	}
	return c.wideDone
}

// wideDone is the end of a wide file of a tree (admit).
func (c *collector) wideDone() {
	c.mu.Lock()
	c.wide--
	last := c.wide == 0
	c.mu.Unlock()
	if !last {
		return
	}
	runtime.GC()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wide == 0 { // no wide file admitted meanwhile
		c.live = heapLive()
		debug.SetGCPercent(-1)
		c.limitSmall()
	}
}

// oneFileGC turns the collector off for a file whose CFI section has
// cfiSize bytes (collector), unless GOGC or GOMEMLIMIT say otherwise.
func oneFileGC(cfiSize uint64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := uint64(maxHeapOff)
	if cfiSize < (maxHeapOff-oneFileHeap)/oneFileFactor {
		limit = oneFileHeap + oneFileFactor*cfiSize
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(min(int64(limit), debug.SetMemoryLimit(-1)))
}
