package main

import (
	"fmt"
	"strings"

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

// memoryBudget is the run's budget, shared by the files processed at
// once; a nil *memoryBudget is unlimited.
type memoryBudget = elfread.MemoryBudget

// sizeValue is --memory-limit's byte count (elfread.ParseSize).
type sizeValue int64

func (s *sizeValue) String() string {
	return strings.ReplaceAll(elfread.FormatSize(int64(*s)), " ", "")
}

func (s *sizeValue) Type() string { return "SIZE" }

func (s *sizeValue) Set(v string) error {
	n, err := elfread.ParseSize(v)
	if err == nil {
		*s = sizeValue(n)
	}
	return err
}

// readMemoryUsage is the help of the read commands' --memory-limit.
const readMemoryUsage = "the most memory reading FILE may take"

// memoryLimitFlag adds --memory-limit to the flags of a command that
// reads files (usage: what it bounds), with its default, and returns what
// gives the run's budget once the flags are parsed (the Go runtime told
// of it too).
func (c *cli) memoryLimitFlag(fs *pflag.FlagSet, usage string) func() (*memoryBudget, error) {
	limit := sizeValue(elfread.DefaultMemoryLimit())
	fs.Var(&limit, "memory-limit", usage+" (`SIZE`: 512M, 2G); unless given, half the machine's memory, at most 2G")
	return func() (*memoryBudget, error) {
		if limit < elfread.MinMemoryLimit {
			return nil, fmt.Errorf("--memory-limit %s: want at least %s", elfread.FormatSize(int64(limit)), elfread.FormatSize(elfread.MinMemoryLimit))
		}
		b := elfread.NewMemoryBudget(int64(limit))
		if c.tuneRuntime {
			b.LimitRuntime()
		}
		return b, nil
	}
}
