package lower

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestMakeBig checks that makeBig makes the list make makes and, on Linux,
// that the whole huge pages inside a big one are advised as such (the
// "hg" flag of their mapping in /proc/self/smaps).
func TestMakeBig(t *testing.T) {
	for _, tc := range []struct{ n, c int }{{0, 0}, {3, 10}, {0, 1 << 20}, {1000, 3 << 20}} {
		s := makeBig[uint64](tc.n, tc.c, true)
		if len(s) != tc.n || cap(s) != tc.c {
			t.Errorf("makeBig(%d, %d): len %d cap %d", tc.n, tc.c, len(s), cap(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("makeBig(%d, %d)[%d] = %d", tc.n, tc.c, i, v)
			}
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	type advisedList struct {
		name    string
		advised uintptr // an address that must be in an advised mapping
		aligned bool    // the list must start on a huge page
		keep    any
	}
	bytes16 := makeBig[byte](0, 16<<20, true)
	words := makeBig[uint64](10, bigList/8, true)
	triples := makeBig[[3]uint64](0, 8<<20/24, true)
	first := func(p unsafe.Pointer) uintptr { return uintptr(p) }
	for _, tc := range []advisedList{
		{"16 MiB of bytes", first(unsafe.Pointer(unsafe.SliceData(bytes16))), true, bytes16},
		{"256 KiB of uint64", first(unsafe.Pointer(unsafe.SliceData(words))), true, words},
		{"8 MiB of 24-byte elements", (first(unsafe.Pointer(unsafe.SliceData(triples))) + hugePage - 1) &^ (hugePage - 1), false, triples},
	} {
		if tc.aligned && tc.advised%hugePage != 0 {
			t.Errorf("%s: starts at %#x, not on a huge page", tc.name, tc.advised)
		}
		flags, err := vmFlags(tc.advised)
		if err != nil {
			sysfiles.NeedInput(t, "no /proc/self/smaps (a Linux kernel with procfs mounted): %v", err)
		}
		if !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("%s: the mapping of %#x has flags %q, no hg", tc.name, tc.advised, flags)
		}
		runtime.KeepAlive(tc.keep)
	}
}

// vmFlags returns the VmFlags of the mapping of addr in /proc/self/smaps.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(rest), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping holds %#x", addr)
}
