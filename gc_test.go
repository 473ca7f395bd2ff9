package sframegen

import (
	"debug/elf"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// TestOneFileGC checks the collector settings of one file: off up to
// 256 MiB plus 16 times the CFI size, at most 4 GiB, and left alone when
// GOGC or GOMEMLIMIT is set.
func TestOneFileGC(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	tests := []struct {
		env, value  string
		cfiSize     uint64
		wantPercent int
		wantLimit   int64
	}{
		{"", "", 1 << 20, -1, 256<<20 + 16<<20},
		{"", "", 0, -1, 256 << 20},
		{"", "", 200 << 20, -1, 256<<20 + 16*200<<20},
		{"", "", 300 << 20, -1, 4 << 30},
		{"", "", math.MaxUint64, -1, 4 << 30},
		{"GOGC", "50", 1 << 20, 100, math.MaxInt64},
		{"GOMEMLIMIT", "1GiB", 1 << 20, 100, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Setenv("GOGC", "")
		t.Setenv("GOMEMLIMIT", "")
		if tt.env != "" {
			t.Setenv(tt.env, tt.value)
		}
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		oneFileGC(tt.cfiSize)
		gotPercent := debug.SetGCPercent(100)
		gotLimit := debug.SetMemoryLimit(math.MaxInt64)
		if gotPercent != tt.wantPercent || gotLimit != tt.wantLimit {
			t.Errorf("%s=%q, CFI %d bytes: GC percent %d, limit %d; want %d, %d", tt.env, tt.value, tt.cfiSize, gotPercent, gotLimit, tt.wantPercent, tt.wantLimit)
		}
	}
}

// TestTreeGC checks the collector settings of a tree: off, with a memory
// limit of the heap live at the start plus treeHeapRoom plus the Costs
// of the small files in flight (within the limit set before); at 100,
// with the limit set before, while a wide file is admitted (however
// many); left alone when GOGC or GOMEMLIMIT is set; and that
// ProcessTree applies them.
func TestTreeGC(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	const base = 1 << 40
	for _, tt := range []struct{ env, value string }{{"", ""}, {"GOGC", "50"}, {"GOMEMLIMIT", "1GiB"}} {
		t.Setenv("GOGC", "")
		t.Setenv("GOMEMLIMIT", "")
		if tt.env != "" {
			t.Setenv(tt.env, tt.value)
		}
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(base)
		gc := new(collector)
		gc.startTree()
		// check: the settings after each step, in turn.
		check := func(when string, wantPercent int, wantLimit int64) {
			t.Helper()
			if tt.env != "" {
				wantPercent, wantLimit = 100, base // left alone
			}
			gotPercent, gotLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(base)
			debug.SetGCPercent(gotPercent)
			debug.SetMemoryLimit(gotLimit)
			if gotPercent != wantPercent || gotLimit != wantLimit {
				t.Errorf("%s=%q, %s: GC percent %d, limit %d; want %d, %d", tt.env, tt.value, when, gotPercent, gotLimit, wantPercent, wantLimit)
			}
		}
		live := gc.live
		check("the tree started", -1, live+treeHeapRoom)
		small := gc.admit(Cost{Bytes: 1 << 20, CFIBytes: 1 << 17})
		check("a small file admitted", -1, live+treeHeapRoom+1<<20)
		wide1 := gc.admit(Cost{Bytes: 64 << 20, CFIBytes: 8 << 20})
		check("a wide file admitted", 100, base)
		wide2 := gc.admit(Cost{Bytes: treeHeapRoom / 4})
		wide1()
		check("one of two wide files done", 100, base)
		small()
		check("a small file done", 100, base)
		wide2()
		live = gc.live // what the collection after the last wide file found
		check("every wide file done", -1, live+treeHeapRoom)
		other := gc.admit(Cost{Bytes: treeHeapRoom/4 - 1})
		check("a file just under wide admitted", -1, live+treeHeapRoom+treeHeapRoom/4-1)
		other()
		check("every file done", -1, live+treeHeapRoom)
	}
	// The limit set before bounds the tree's.
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(treeHeapRoom / 2)
	gc := new(collector)
	gc.startTree()
	done := gc.admit(Cost{Bytes: 1 << 20})
	if got := debug.SetMemoryLimit(base); got != treeHeapRoom/2 {
		t.Errorf("limit %d before the tree: limit %d, want it kept", treeHeapRoom/2, got)
	}
	done()
	for _, tune := range []bool{false, true} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(base)
		g, err := NewGenerator(Options{}, Resources{TuneGC: tune})
		if err != nil {
			t.Fatal(err)
		}
		// Within the tree, the collector is set (Done sees it); after
		// it, back to what it was.
		during := 0
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "f"), []byte("not ELF"), 0o644); err != nil {
			t.Fatal(err)
		}
		tree, err := Walk([]string{root}, WalkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = g.ProcessTree(tree, TreeOptions{Done: func(int, *Outcome, error) {
			during = debug.SetGCPercent(-1)
			debug.SetGCPercent(during)
		}})
		if err != nil {
			t.Fatal(err)
		}
		wantDuring := 100
		if tune {
			wantDuring = -1
		}
		if during != wantDuring {
			t.Errorf("ProcessTree, TuneGC %v: GC percent %d within the tree, want %d", tune, during, wantDuring)
		}
		if got, gotLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(base); got != 100 || gotLimit != base {
			t.Errorf("ProcessTree, TuneGC %v: GC percent %d, limit %d after the tree; want 100, %d as before it", tune, got, gotLimit, int64(base))
		}
	}
}

// TestTreeGCGoal checks that once the last wide file is done the
// collector's goal is set from the heap live after it, not a multiple of the heap its
// last collection found while the file's lists were live: three times
// those (GOGC=200) is what raised the second run over a tree over its
// bound.
func TestTreeGCGoal(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	gc := new(collector)
	gc.startTree()
	done := gc.admit(Cost{Bytes: 128 << 20, CFIBytes: 16 << 20})
	const listBytes = 64 << 20
	lists := make([]byte, listBytes)
	for i := range lists {
		lists[i] = byte(i)
	}
	runtime.GC() // a collection while the wide file's lists are live
	runtime.KeepAlive(lists)
	lists = nil
	done()
	goal := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(goal)
	if got := goal[0].Value.Uint64(); got >= listBytes {
		t.Errorf("heap goal after the last wide file: %d MiB, want less than the %d MiB of its dead lists", got>>20, listBytes>>20)
	}
	if got := debug.SetGCPercent(100); got != -1 {
		t.Errorf("GC percent after the last wide file: %d, want -1 (off, the memory limit triggering it)", got)
	}
}

// TestOneFileGCGenerate checks that generating one file with TuneGC sets
// the collector from the size of its CFI section, before it is read.
func TestOneFileGCGenerate(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	in := "testdata/link/aarch64/direct.so"
	f, err := elf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	cfi := f.Section(".eh_frame").Size
	f.Close()
	for _, tune := range []bool{false, true} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		g, err := NewGenerator(Options{}, Resources{TuneGC: tune})
		if err != nil {
			t.Fatal(err)
		}
		r, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := r.Stat()
		_, err = g.GenerateAt(r, st.Size(), 0)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		gotPercent, gotLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
		wantPercent, wantLimit := 100, int64(math.MaxInt64)
		if tune {
			wantPercent, wantLimit = -1, int64(256<<20+16*cfi)
		}
		if cfi == 0 || gotPercent != wantPercent || gotLimit != wantLimit {
			t.Errorf("TuneGC %v, CFI %d bytes: GC percent %d, limit %d; want %d, %d", tune, cfi, gotPercent, gotLimit, wantPercent, wantLimit)
		}
	}
}
