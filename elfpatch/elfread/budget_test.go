package elfread

import (
	"math"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestParseSize checks the sizes --memory-limit reads.
func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"65536", 65536, false},
		{"512M", 512 << 20, false},
		{"512m", 512 << 20, false},
		{"2G", 2 << 30, false},
		{"2GiB", 2 << 30, false},
		{"2 GiB", 2 << 30, false},
		{"1.5G", 3 << 29, false},
		{"64KB", 64 << 10, false},
		{"1T", 1 << 40, false},
		{"", 0, true},
		{"G", 0, true},
		{"-1G", 0, true},
		{"2X", 0, true},
		{"9999999999T", 0, true},
	} {
		got, err := ParseSize(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	// A size as a flag's default prints it (FormatSize, without its
	// space) parses back.
	v := strings.ReplaceAll(FormatSize(2<<30), " ", "")
	if got, err := ParseSize(v); err != nil || got != 2<<30 {
		t.Errorf("the flag's default %q does not parse back: %d, %v", v, got, err)
	}
}

// TestMemoryBudgetOrder: a request over the budget fails at once; others
// wait until enough is given back, and are served in the order they
// asked (a big one is not passed by a small one that would fit).
func TestMemoryBudgetOrder(t *testing.T) {
	const mib = 1 << 20
	b := NewMemoryBudget(MemoryReserve + 100*mib)
	err := b.Acquire(101*mib, "an object of 101 MiB is read whole")
	if err == nil || !strings.Contains(err.Error(), "over the memory limit of 132 MiB (--memory-limit)") {
		t.Fatalf("over the budget: %v", err)
	}
	if err := b.Acquire(60*mib, "first"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	ask := func(name string, n int64) {
		defer wg.Done()
		if err := b.Acquire(n, name); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
	}
	wg.Add(1)
	go ask("big", 90*mib) // waits for "first"
	time.Sleep(50 * time.Millisecond)
	wg.Add(1)
	go ask("small", 10*mib) // would fit now, but "big" asked first
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	if len(order) != 0 {
		t.Errorf("served while the budget was held, or before the file that asked first: %v", order)
	}
	mu.Unlock()
	b.Release(60 * mib)
	wg.Wait()
	if len(order) != 2 {
		t.Errorf("served %v; want big and small", order)
	}
}

// TestDefaultMemoryLimit checks that the default limit is half the
// machine's memory (or its control group's), within its bounds.
func TestDefaultMemoryLimit(t *testing.T) {
	got := DefaultMemoryLimit()
	if got < MinMemoryLimit || got > MaxDefaultMemory {
		t.Fatalf("DefaultMemoryLimit() = %d, want within [%d, %d]", got, int64(MinMemoryLimit), int64(MaxDefaultMemory))
	}
	if total := systemMemory(); total > 0 && total/2 < MaxDefaultMemory && total/2 > MinMemoryLimit && got > total/2 {
		t.Errorf("DefaultMemoryLimit() = %d, more than half the machine's %d bytes", got, total)
	}
}

// TestLimitRuntime checks that a budget sets the runtime's memory limit
// to its own less the reserve, unless GOMEMLIMIT is set.
func TestLimitRuntime(t *testing.T) {
	old := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	for _, env := range []string{"", "1GiB"} {
		t.Setenv("GOMEMLIMIT", env)
		debug.SetMemoryLimit(math.MaxInt64)
		NewMemoryBudget(256 << 20).LimitRuntime()
		(*MemoryBudget)(nil).LimitRuntime() // unlimited: nothing set
		want := int64(256<<20 - MemoryReserve)
		if env != "" {
			want = math.MaxInt64
		}
		if got := debug.SetMemoryLimit(math.MaxInt64); got != want {
			t.Errorf("GOMEMLIMIT=%q: limit %d, want %d", env, got, want)
		}
	}
}
