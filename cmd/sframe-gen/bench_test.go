package main

import (
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/lower"
)

// The benchmarks below time each stage of the generate pipeline on the
// largest .eh_frame of the development machine (rust's libLLVM.so: 7.7 MB,
// 160,805 FDEs), or on $SFRAME_BENCH_ELF. Run them with
//
//	go test -run '^$' -bench . -benchmem -count 6 ./cmd/sframe-gen | benchstat -
//
// Besides ns/op and allocations they report cpu-ms/op (user+system CPU
// time of the process per operation: on a loaded machine the wall clock
// counts the waits for a core too) and ns/FDE.

// benchFile returns the ELF file the benchmarks use, or skips.
func benchFile(b *testing.B) string {
	b.Helper()
	cands := []string{os.Getenv("SFRAME_BENCH_ELF")}
	m, _ := filepath.Glob("/root/.rustup/toolchains/stable-*/lib/libLLVM*.so*")
	cands = append(cands, m...)
	for _, p := range cands {
		if p == "" {
			continue
		}
		if f, err := elf.Open(p); err == nil { // not a linker script
			f.Close()
			return p
		}
	}
	b.Skip("no benchmark ELF file (set SFRAME_BENCH_ELF)")
	return ""
}

// cpuNow is the process's user+system CPU time.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchState is what the stages before the one measured produce.
type benchState struct {
	in     *os.File
	ef     *elf.File
	target lower.Target
	frames *cfi.Frames
	res    *lower.Result
}

func loadBench(b *testing.B, upTo string) *benchState {
	b.Helper()
	path := benchFile(b)
	in, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close() })
	s := &benchState{in: in}
	if s.ef, err = elf.NewFile(in); err != nil {
		b.Fatal(err)
	}
	if s.target, err = lower.TargetForELF(s.ef); err != nil {
		b.Fatal(err)
	}
	if upTo == "open" {
		return s
	}
	if s.frames, err = cfi.Read(s.ef, cfi.Auto); err != nil {
		b.Fatal(err)
	}
	if upTo == "read" {
		return s
	}
	if s.res, _, err = lower.LowerFile(s.ef, s.frames, s.target, lower.Options{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// run times fn b.N times and reports cpu-ms/op and ns/FDE.
func (s *benchState) run(b *testing.B, fdes int, fn func() error) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuNow(), time.Now()
	for i := 0; i < b.N; i++ {
		if err := fn(); err != nil {
			b.Fatal(err)
		}
	}
	wall := time.Since(t0)
	cpu := cpuNow() - cpu0
	b.StopTimer()
	b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
	if fdes > 0 {
		b.ReportMetric(float64(wall.Nanoseconds())/float64(b.N)/float64(fdes), "ns/FDE")
	}
}

// BenchmarkStageOpen is elf.NewFile plus the target: the headers only.
func BenchmarkStageOpen(b *testing.B) {
	s := loadBench(b, "open")
	s.run(b, 0, func() error {
		ef, err := elf.NewFile(s.in)
		if err != nil {
			return err
		}
		_, err = lower.TargetForELF(ef)
		return err
	})
}

// BenchmarkStageRead is cfi.Read: the section bytes into CIEs and FDEs.
func BenchmarkStageRead(b *testing.B) {
	s := loadBench(b, "read")
	s.run(b, len(s.frames.FDEs), func() error {
		_, err := cfi.Read(s.ef, cfi.Auto)
		return err
	})
}

// BenchmarkStageRows executes every FDE's instructions into rows (the
// cfi evaluator alone; generate does not use it, verify and rows do).
func BenchmarkStageRows(b *testing.B) {
	s := loadBench(b, "read")
	var it cfi.RowIterator
	s.run(b, len(s.frames.FDEs), func() error {
		for _, f := range s.frames.FDEs {
			it.Reset(s.frames, f)
			for {
				if _, err := it.Next(); err != nil {
					if err == io.EOF {
						break
					}
					return err
				}
			}
		}
		return nil
	})
}

// BenchmarkStageScan is cfi.Open and lower.LowerScan, packed and on every
// CPU, as the CLI runs them on a linked file: the section read, then each
// FDE read and lowered in one pass (BenchmarkStageRead and
// BenchmarkStageLower are the two passes of cfi.Read and lower.LowerFile).
func BenchmarkStageScan(b *testing.B) {
	benchScan(b, runtime.GOMAXPROCS(0))
}

// BenchmarkStageScanSerial is BenchmarkStageScan on one goroutine.
func BenchmarkStageScanSerial(b *testing.B) {
	benchScan(b, 1)
}

func benchScan(b *testing.B, workers int) {
	s := loadBench(b, "read")
	opt := lower.Options{Workers: workers}
	s.run(b, len(s.frames.FDEs), func() error {
		frames, err := cfi.Open(s.ef, cfi.Auto)
		if err != nil {
			return err
		}
		_, _, _, err = lower.LowerScan(s.ef, frames, s.target, opt)
		return err
	})
}

// BenchmarkStageLower is lower.LowerFile, packed and on every CPU: every
// FDE cfi.Read read to an SFrame FDE and its encoded FREs.
func BenchmarkStageLower(b *testing.B) {
	s := loadBench(b, "read")
	opt := lower.Options{Workers: runtime.GOMAXPROCS(0)}
	s.run(b, len(s.frames.FDEs), func() error {
		_, _, err := lower.LowerFile(s.ef, s.frames, s.target, opt)
		return err
	})
}

// BenchmarkStageLowerSerial is BenchmarkStageLower on one goroutine.
func BenchmarkStageLowerSerial(b *testing.B) {
	s := loadBench(b, "read")
	s.run(b, len(s.frames.FDEs), func() error {
		_, _, err := lower.LowerFile(s.ef, s.frames, s.target, lower.Options{})
		return err
	})
}

// BenchmarkStageEncode is Place and Encode: the section bytes. Each run
// starts from the lowered order (Place sorts it in place): the copy back
// is timed too (about 1 ms of memmove on libLLVM.so).
func BenchmarkStageEncode(b *testing.B) {
	s := loadBench(b, "lower")
	index := slices.Clone(s.res.Section.Index)
	starts := slices.Clone(s.res.Starts)
	srcs := slices.Clone(s.res.Sources)
	s.run(b, len(s.frames.FDEs), func() error {
		copy(s.res.Section.Index, index)
		copy(s.res.Starts, starts)
		copy(s.res.Sources, srcs)
		s.res.Place(0x1000)
		_, err := s.res.Section.Encode()
		return err
	})
}

// BenchmarkStageWrite is elfpatch.PatchLinked with the section already
// encoded: the copy of the file and the new headers (no fsync).
func BenchmarkStageWrite(b *testing.B) {
	s := loadBench(b, "lower")
	s.res.Place(0)
	data, err := s.res.Section.Encode()
	if err != nil {
		b.Fatal(err)
	}
	out, err := os.Create(filepath.Join(b.TempDir(), "out"))
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	s.run(b, len(s.frames.FDEs), func() error {
		_, err := elfpatch.PatchLinked(s.in, out, len(data), func(uint64) ([]byte, error) { return data, nil })
		return err
	})
}

// BenchmarkGenerate is the whole default command, as the CLI runs it:
// --raw (the section only) and -o OUT (the patched file, fsync included).
func BenchmarkGenerate(b *testing.B) {
	path := benchFile(b)
	s := loadBench(b, "read")
	fdes := len(s.frames.FDEs)
	s.frames = nil
	dir := b.TempDir()
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"raw", []string{"--raw", "-o", filepath.Join(dir, "raw")}},
		{"patch", []string{"-o", filepath.Join(dir, "out")}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			c := &cli{stdout: io.Discard, stderr: io.Discard}
			args := append(mode.args, path)
			s.run(b, fdes, func() error {
				if code := c.main(args); code != exitOK {
					b.Fatalf("exit %d", code)
				}
				return nil
			})
		})
	}
}

// BenchmarkStageShare is emit.Section.ShareFREs on the section
// (--share-fres): each distinct block of FRE data kept once. The copy of
// the section each run starts from is not timed (nor in cpu-ms/op).
func BenchmarkStageShare(b *testing.B) {
	s := loadBench(b, "lower")
	sec := s.res.Section
	data, index := slices.Clone(sec.FREData), slices.Clone(sec.Index)
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sec.FREData = append(sec.FREData[:0], data...)
		copy(sec.Index, index)
		b.StartTimer()
		cpu0 := cpuNow()
		if _, err := sec.ShareFREs(); err != nil {
			b.Fatal(err)
		}
		cpu += cpuNow() - cpu0
	}
	b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
}
