package lower

import (
	"debug/elf"
	"os"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// libLLVM returns a large real .eh_frame: $LOWER_BENCH_ELF, else a
// libLLVM.so from the system, or skips.
func libLLVM(b *testing.B) *elf.File {
	cands := []string{os.Getenv("LOWER_BENCH_ELF"), "/usr/lib/llvm-14/lib/libLLVM.so", "/usr/lib/x86_64-linux-gnu/libLLVM-15.so"}
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
// each mode.
func BenchmarkLowerLibLLVM(b *testing.B) {
	b.Run("default", func(b *testing.B) { benchLower(b, Options{}) })
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
		if res, err = LowerWith(frames, t, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(frames.FDEs)), "FDEs")
	b.ReportMetric(float64(len(res.Skipped)), "skipped")
}
