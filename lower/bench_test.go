package lower

import (
	"debug/elf"
	"os"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// libLLVM returns a large real .eh_frame: $LOWER_BENCH_ELF, else the
// system's biggest libLLVM (ldconfig -p), or skips.
func libLLVM(b *testing.B) *elf.File {
	cands := []string{os.Getenv("LOWER_BENCH_ELF"), sysfiles.BigLib(b)}
	for _, p := range cands {
		if p == "" {
			continue
		}
		if f, err := elf.Open(p); err == nil {
			return f
		}
	}
	b.Skip("no libLLVM.so found (set LOWER_BENCH_ELF)")
	return nil
}

// BenchmarkLowerLibLLVM lowers every FDE of libLLVM.so's .eh_frame, in
// each mode, on one goroutine: "default" with the fast path (fast.go),
// one FRE block per function; "shared" the same with shared FRE blocks
// (the command's default: what sharing costs); "translator" without the
// fast path, every function through the translator: what the fast path
// is worth (docs/performance.md).
func BenchmarkLowerLibLLVM(b *testing.B) {
	b.Run("default", func(b *testing.B) { benchLower(b, Options{}) })
	b.Run("shared", func(b *testing.B) { benchLower(b, Options{ShareFREs: true}) })
	b.Run("translator", func(b *testing.B) { benchLower(b, Options{noFast: true}) })
	b.Run("gas-compat", func(b *testing.B) { benchLower(b, Options{GasCompat: true}) })
}

func benchLower(b *testing.B, opt Options) {
	f := libLLVM(b)
	defer f.Close()
	t, err := TargetForELF(f)
	if err != nil {
		b.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.EHFrame)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var res *Result
	for b.Loop() {
		if res, err = Lower(frames, t, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(frames.FDEs)), "FDEs")
	if opt.ShareFREs {
		b.ReportMetric(float64(len(res.Section.FREData)), "FRE-bytes")
	}
	b.ReportMetric(float64(len(res.Skipped)), "skipped")
}

// benchStarts returns the function starts of libLLVM.so's .eh_frame in
// section order, cut as LowerScan cuts them for two workers.
func benchStarts(b *testing.B) (starts []uint64, cuts []int) {
	f := libLLVM(b)
	defer f.Close()
	frames, err := cfi.Read(f, cfi.EHFrame)
	if err != nil {
		b.Fatal(err)
	}
	for _, fde := range frames.FDEs {
		starts = append(starts, fde.Start)
	}
	weights := partWeights(2, 0)
	total := 0
	for _, w := range weights {
		total += w
	}
	cuts = []int{0}
	acc := 0
	for _, w := range weights {
		acc += w
		cuts = append(cuts, len(starts)*acc/total)
	}
	return starts, cuts
}

// BenchmarkSortRuns sorts libLLVM.so's starts part by part (sortRun), as
// the workers of LowerScan do, and merges them (order).
func BenchmarkSortRuns(b *testing.B) {
	starts, cuts := benchStarts(b)
	s := newSortedRuns(len(cuts)-1, len(starts), 0)
	sortAll := func() {
		s.runs = s.runs[:0]
		for k := range len(cuts) - 1 {
			part := starts[cuts[k]:cuts[k+1]]
			vals, tmp := s.window(cuts[k], len(part))
			if !s.sortRun(k, part, vals, tmp) {
				b.Fatal("not sorted")
			}
			s.runs = append(s.runs, sortedRun{at: cuts[k], n: len(part), first: cuts[k]})
		}
	}
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			sortAll()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(starts)), "ns/start")
	})
	b.Run("merge", func(b *testing.B) {
		sortAll()
		order := make([]int, len(starts))
		for b.Loop() {
			if s.order(starts, order) == nil {
				b.Fatal("no order")
			}
		}
	})
	b.Run("placeOrder", func(b *testing.B) {
		r := &Result{Starts: starts}
		mem := make([]int, 2*len(starts))
		for b.Loop() {
			r.placeOrder(0, mem)
		}
	})
}
