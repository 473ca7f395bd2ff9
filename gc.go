package sframegen

import (
	"os"
	"runtime"
	"runtime/debug"
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
// A tree (ProcessTree): its files come and go. The collector runs at
// treeGCPercent while only small files are processed: a collection when
// the heap has grown by twice what was live, not once. While a file whose
// CFI is lowered on every CPU (Cost.Parallel) is processed, it is back at
// 100: there most of the heap is live lists, and twice them on top raised
// the peak over the bound. When the last such wide file is done, a
// collection runs before the percent goes back up: the collector's next
// goal is a multiple of the heap its last collection found live, which
// then held the wide files' lists, now garbage.
//
// GOGC or GOMEMLIMIT in the environment (GOGC alone for a tree) leave the
// collector as they set it.
type collector struct {
	mu   sync.Mutex
	tree bool // in ProcessTree
	off  bool // GOGC set: the tree's files leave the collector alone
	wide int  // a tree's files in flight with a section lowered on every CPU
}

// The collector's settings (collector).
const (
	oneFileHeap   = 256 << 20
	oneFileFactor = 16
	maxHeapOff    = 4 << 30
	treeGCPercent = 200
)

// startTree sets the collector for a tree's files.
func (c *collector) startTree() {
	c.mu.Lock()
	c.tree, c.off = true, os.Getenv("GOGC") != ""
	if !c.off {
		debug.SetGCPercent(treeGCPercent)
	}
	c.mu.Unlock()
}

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
	case c.off || !cost.Parallel():
		return none
	}
	if c.wide++; c.wide == 1 {
		debug.SetGCPercent(100)
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
	if c.wide == 0 { // no wide file admitted meanwhile
		debug.SetGCPercent(treeGCPercent)
	}
	c.mu.Unlock()
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
