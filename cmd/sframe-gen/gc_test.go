package main

import (
	"bytes"
	"debug/elf"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	sframegen "github.com/sframe-gen/sframe-gen"
)

// TestTuneGC checks the collector settings of a generate run: off up to
// 256 MiB plus 16 times the CFI size, at most 4 GiB, and left alone when
// GOGC or GOMEMLIMIT is set.
func TestTuneGC(t *testing.T) {
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
		{"", "", 300 << 20, -1, maxHeapOff},
		{"", "", math.MaxUint64, -1, maxHeapOff},
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
		tuneGC(tt.cfiSize)
		gotPercent := debug.SetGCPercent(100)
		gotLimit := debug.SetMemoryLimit(math.MaxInt64)
		if gotPercent != tt.wantPercent || gotLimit != tt.wantLimit {
			t.Errorf("%s=%q, CFI %d bytes: GC percent %d, limit %d; want %d, %d", tt.env, tt.value, tt.cfiSize, gotPercent, gotLimit, tt.wantPercent, tt.wantLimit)
		}
	}
}

// TestTuneBatchGC checks the collector setting of the batch form:
// batchGCPercent, 100 while a file whose CFI is lowered on every CPU is
// admitted (however many), unless GOGC is set; and that the batch form
// applies it.
func TestTuneBatchGC(t *testing.T) {
	percent := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(percent) })
	for _, tt := range []struct {
		gogc string
		want int
	}{
		{"", batchGCPercent},
		{"50", 100},
	} {
		t.Setenv("GOGC", tt.gogc)
		debug.SetGCPercent(100)
		gc := tuneBatchGC()
		if got := debug.SetGCPercent(tt.want); got != tt.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tt.gogc, got, tt.want)
		}
		if (gc == nil) != (tt.gogc != "") {
			t.Errorf("GOGC=%q: collector %v", tt.gogc, gc)
		}
		// Files admitted and done, in turn: the GC percent after each.
		small := gc.admit(sframegen.Cost{CFIBytes: 1})
		wide1 := gc.admit(sframegen.Cost{CFIBytes: 64 << 20})
		check := func(when string, want int) {
			t.Helper()
			if tt.gogc != "" {
				want = tt.want // left alone
			}
			if got := debug.SetGCPercent(want); got != want {
				t.Errorf("GOGC=%q, %s: GC percent %d, want %d", tt.gogc, when, got, want)
			}
		}
		check("a wide file admitted", 100)
		wide2 := gc.admit(sframegen.Cost{CFIBytes: 5 << 20})
		wide1()
		check("one of two wide files done", 100)
		small()
		check("a small file done", 100)
		wide2()
		check("every wide file done", batchGCPercent)
	}
	called := 0
	var out, errs bytes.Buffer
	c := &cli{stdout: &out, stderr: &errs, batchGC: func() *batchCollector { called++; return nil }}
	dir := t.TempDir()
	if code := c.main([]string{"-q", dir}); code != exitOK || called != 1 {
		t.Errorf("batch form on an empty directory: exit %d, batchGC called %d times; want 0, 1 (%s)", code, called, errs.String())
	}
}

// TestBatchCollectorGoal checks that once the last wide file is done the
// collector's goal is set from the heap live after it, not from the heap
// its last collection found while the file's lists were live: three
// times those (GOGC=200) is what raised the second run over a tree to
// 80-108 MiB.
func TestBatchCollectorGoal(t *testing.T) {
	percent := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(percent) })
	t.Setenv("GOGC", "")
	gc := tuneBatchGC()
	done := gc.admit(sframegen.Cost{CFIBytes: 64 << 20})
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
	if got := debug.SetGCPercent(100); got != batchGCPercent {
		t.Errorf("GC percent after the last wide file: %d, want %d", got, batchGCPercent)
	}
}

// TestHeapFor checks that generate gives its collector hook the size of
// the CFI section before it reads it.
func TestHeapFor(t *testing.T) {
	in := "../../testdata/link/aarch64/direct.so"
	f, err := elf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	want := f.Section(".eh_frame").Size
	f.Close()
	var got []uint64
	var o, e bytes.Buffer
	c := &cli{stdout: &o, stderr: &e, heapFor: func(n uint64) { got = append(got, n) }}
	if code := c.main([]string{"--raw", "-o", filepath.Join(t.TempDir(), "out"), in}); code != exitOK {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	if len(got) != 1 || got[0] != want || want == 0 {
		t.Errorf("heapFor called with %v, want [%d]", got, want)
	}
}
