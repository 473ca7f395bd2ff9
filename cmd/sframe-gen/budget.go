package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// The memory budget of a run (--memory-limit, elfread.MemoryBudget): the
// files being processed at once, by all the workers of the batch form or
// by the single-file form, hold at most that much. Each file's headers,
// then an estimate of its peak (sframegen.Cost), are charged before they
// are read: a file alone over the budget fails with a message naming
// both, and in the batch form a file waits until the files before it give
// back enough. The read commands charge what they read of each file the
// same way (elfread.Meter; docs/robustness.md).

// maxDefaultMemory caps the default budget: a build machine runs other
// jobs beside sframe-gen, and 2 GiB is eight times what the biggest file
// measured needs (a 67 MB static archive: 254 MB).
const maxDefaultMemory = 2 << 30

// minMemoryLimit is the smallest --memory-limit: the process itself and
// the smallest file must fit.
const minMemoryLimit = 64 << 20

// processReserve is the part of the budget kept for the process itself
// (elfread.MemoryReserve).
const processReserve = elfread.MemoryReserve

// memoryBudget is the run's budget, shared by the files processed at
// once; a nil *memoryBudget is unlimited.
type memoryBudget = elfread.MemoryBudget

// newMemoryBudget returns the budget of a run limited to limit bytes.
func newMemoryBudget(limit int64) *memoryBudget { return elfread.NewMemoryBudget(limit) }

// defaultMemoryLimit is half the memory of the machine (or of the control
// group the process runs in, when that is smaller), at most
// maxDefaultMemory and at least minMemoryLimit.
func defaultMemoryLimit() int64 {
	total := int64(maxDefaultMemory) * 2
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil && si.Totalram > 0 {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			total = min(total, n)
		}
	}
	return max(min(total/2, maxDefaultMemory), minMemoryLimit)
}

// sizeValue is a byte count given as a number with an optional binary
// suffix: 512M, 2G, 1.5GiB, 65536.
type sizeValue int64

func (s *sizeValue) String() string { return strings.ReplaceAll(formatSize(int64(*s)), " ", "") }

func (s *sizeValue) Type() string { return "SIZE" }

func (s *sizeValue) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeValue(n)
	return nil
}

// parseSize reads a byte count: a number, then K, M, G or T (powers of
// 1024), optionally followed by "iB" or "B".
func parseSize(v string) (int64, error) {
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

// formatSize prints a byte count in the largest binary unit it reaches.
func formatSize(n int64) string { return elfread.FormatSize(n) }

// readMemoryUsage is the help of the read commands' --memory-limit.
const readMemoryUsage = "the most memory reading FILE may take"

// memoryLimitFlag adds --memory-limit to the flags of a command that
// reads files (usage: what it bounds), with its default, and returns what
// gives the run's budget once the flags are parsed (the Go runtime told
// of it too).
func (c *cli) memoryLimitFlag(fs *pflag.FlagSet, usage string) func() (*memoryBudget, error) {
	limit := sizeValue(defaultMemoryLimit())
	fs.Var(&limit, "memory-limit", usage+" (`SIZE`: 512M, 2G); unless given, half the machine's memory, at most 2G")
	return func() (*memoryBudget, error) {
		if limit < minMemoryLimit {
			return nil, fmt.Errorf("--memory-limit %s: want at least %s", formatSize(int64(limit)), formatSize(minMemoryLimit))
		}
		if c.memoryLimit != nil {
			c.memoryLimit(int64(limit))
		}
		return newMemoryBudget(int64(limit)), nil
	}
}
