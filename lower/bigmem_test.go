package lower

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestMakeBig checks that makeBig makes the list make makes and, on Linux,
// that the whole huge pages inside a big one are advised as such (the
// "hg" flag of their mapping in /proc/self/smaps).
func TestMakeBig(t *testing.T) {
	for _, tc := range []struct{ n, c int }{{0, 0}, {3, 10}, {0, 1 << 20}, {1000, 3 << 20}} {
		s := makeBig[uint64](tc.n, tc.c)
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
	b := makeBig[byte](0, 16<<20)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	inside := (start + hugePage - 1) &^ (hugePage - 1)
	flags, err := vmFlags(inside)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no /proc/self/smaps: %v", err)
		}
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping of %#x (inside a 16 MiB list) has flags %q, no hg", inside, flags)
	}
	runtime.KeepAlive(b)
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
