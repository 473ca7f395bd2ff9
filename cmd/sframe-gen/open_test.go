package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// TestPrefault checks that prefault maps the pages of a part of a file
// mapping (the mapping's Rss in /proc/self/smaps covers the part, none of
// the rest), and that it does nothing for a part outside the mapping.
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
	for _, tc := range []struct{ from, to int }{{0, size}, {1<<20 + 123, 3<<20 + 5}, {5 << 20, 5<<20 + 1}} {
		mapped, unmap := mapFile(f, size)
		if mapped == nil {
			t.Fatal("mapFile failed")
		}
		<-prefault(mapped, mapped[tc.from:tc.to])
		rss, err := mappingRss(uintptr(unsafe.Pointer(unsafe.SliceData(mapped))))
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("no /proc/self/smaps: %v", err)
			}
			t.Skipf("no /proc/self/smaps: %v", err)
		}
		page := os.Getpagesize()
		want := (tc.to+page-1)/page*page - tc.from/page*page
		// The kernel maps more around a fault (64 KiB, or the whole
		// large folio of the page cache): not the whole file for a byte.
		if rss < want || tc.to-tc.from == 1 && rss >= size {
			t.Errorf("[%#x, %#x) prefaulted: %d bytes of the mapping mapped, want %d", tc.from, tc.to, rss, want)
		}
		unmap()
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

// mappingRss returns the Rss, in bytes, of the mapping that starts at addr
// (/proc/self/smaps).
func mappingRss(addr uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo == addr
			continue
		}
		var kb int
		if n, _ := fmt.Sscanf(line, "Rss: %d kB", &kb); n == 1 && in {
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no mapping starts at %#x", addr)
}
