package main

import (
	"bytes"
	"math"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestTuneRuntime checks that the command sets the collector to its
// files (sframegen.Resources.TuneGC: off for one FILE, and not turned
// back on) when main asks it to, and leaves it alone otherwise; a tree's
// settings (sframegen's TestTreeGC) are given back when it is done.
func TestTuneRuntime(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	in := "../../testdata/link/aarch64/direct.so"
	for _, tt := range []struct {
		args []string
		want int // GC percent after, tuned
	}{
		{[]string{"--raw", "-o", filepath.Join(t.TempDir(), "out"), in}, -1},
		{[]string{"-q", t.TempDir()}, 100},
	} {
		for _, tune := range []bool{false, true} {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			var o, e bytes.Buffer
			c := &cli{stdout: &o, stderr: &e, tuneRuntime: tune}
			if code := c.main(tt.args); code != exitOK {
				t.Fatalf("%v: exit %d: %s", tt.args, code, e.String())
			}
			want := 100
			if tune {
				want = tt.want
			}
			if got := debug.SetGCPercent(100); got != want {
				t.Errorf("%v, tuned %v: GC percent %d, want %d", tt.args, tune, got, want)
			}
		}
	}
}
