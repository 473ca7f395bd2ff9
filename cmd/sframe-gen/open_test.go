package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPrefault checks that prefault maps the pages of a part of a file
// mapping: reading the part afterwards takes far fewer page faults than
// reading the same part of a mapping not prefaulted. And that it does
// nothing, at once, for a part outside the mapping.
func TestPrefault(t *testing.T) {
	const size = 8 << 20
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// faults returns the minor page faults of reading mapped[from:to]
	// (one byte a page), after prefaulting it or not.
	faults := func(from, to int, prefaulted bool) int64 {
		mapped, unmap := mapFile(f, size)
		if mapped == nil {
			t.Fatal("mapFile failed")
		}
		defer unmap()
		if prefaulted {
			<-prefault(mapped, mapped[from:to])
		}
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		sum := byte(0)
		for i := from; i < to; i += os.Getpagesize() {
			sum += mapped[i]
		}
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		if sum != 0 {
			t.Fatal("the file is not zeros")
		}
		return after.Minflt - before.Minflt
	}
	for _, tc := range []struct{ from, to int }{{0, size}, {1<<20 + 123, 7<<20 + 5}} {
		cold, warm := faults(tc.from, tc.to, false), faults(tc.from, tc.to, true)
		// (On this machine 55-71 faults cold, 0 prefaulted; a kernel
		// mapping large folios of the page cache at once takes fewer.)
		if cold == 0 || warm > cold/4 {
			t.Errorf("[%#x, %#x): %d page faults reading it prefaulted, %d not", tc.from, tc.to, warm, cold)
		}
	}
	// Not a part of the mapping: nothing, at once.
	mapped, unmap := mapFile(f, size)
	defer unmap()
	for _, data := range [][]byte{nil, make([]byte, 10), mapped[:0]} {
		select {
		case <-prefault(mapped, data):
		default:
			t.Errorf("prefault of %d bytes outside the mapping is not done at once", len(data))
		}
	}
}
