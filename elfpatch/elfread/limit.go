package elfread

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// MinMemoryLimit is the smallest limit a command gives its MemoryBudget:
// the process itself and the smallest file must fit.
const MinMemoryLimit = 64 << 20

// MaxDefaultMemory caps DefaultMemoryLimit: a build machine runs other
// jobs beside sframe-gen, and it is several times what the biggest file
// measured needs (docs/robustness.md).
const MaxDefaultMemory = 2 << 30

// DefaultMemoryLimit is the limit of a MemoryBudget when none is given:
// half the memory of the machine (or of the control group the process
// runs in, when that is smaller), at most MaxDefaultMemory and at least
// MinMemoryLimit.
func DefaultMemoryLimit() int64 {
	total := systemMemory()
	if total <= 0 {
		total = MaxDefaultMemory * 2
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			total = min(total, n)
		}
	}
	return max(min(total/2, MaxDefaultMemory), MinMemoryLimit)
}

// ParseSize reads a byte count: a number, then K, M, G or T (powers of
// 1024), optionally followed by "iB" or "B": 512M, 2G, 1.5GiB, 65536.
func ParseSize(v string) (int64, error) {
	num := strings.TrimSpace(v)
	for _, suffix := range []string{"iB", "B"} {
		if strings.HasSuffix(num, suffix) && len(num) > len(suffix) {
			num = strings.TrimSuffix(num, suffix)
			break
		}
	}
	shift := 0
	if k := len(num) - 1; k >= 0 {
		if i := strings.IndexByte("KMGT", num[k]&^0x20); i >= 0 {
			shift, num = 10*(i+1), strings.TrimSpace(num[:k])
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || f*float64(int64(1)<<shift) >= 1<<62 {
		return 0, fmt.Errorf("%q: want a size such as 512M or 2G", v)
	}
	return int64(f * float64(int64(1)<<shift)), nil
}

// LimitRuntime makes the Go runtime collect garbage before the heap
// reaches b's limit (the process's reserve kept), unless GOMEMLIMIT in the
// environment says otherwise.
func (b *MemoryBudget) LimitRuntime() {
	if b != nil && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(b.limit - MemoryReserve)
	}
}
