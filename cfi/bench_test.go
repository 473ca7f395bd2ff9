package cfi

import (
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time: on a loaded machine it
// measures the work better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the throughput per CPU second ("cpu-MB/s").
func reportCPU(b *testing.B, start time.Duration, bytes int64) {
	if d := cpuTime() - start; d > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/d.Seconds(), "cpu-MB/s")
	}
}

// largestEHFrame returns rust's libLLVM.so (the largest .eh_frame on the
// development machine: 7.7 MB, 160,805 FDEs), or skips.
func largestEHFrame(b *testing.B) string {
	m, _ := filepath.Glob("/root/.rustup/toolchains/stable-*/lib/libLLVM*.so*")
	all, _ := filepath.Glob("/root/.rustup/toolchains/*/lib/libLLVM*.so*")
	m = append(m, all...)
	for _, p := range m {
		if f, err := elf.Open(p); err == nil { // not the linker script
			f.Close()
			return p
		}
	}
	b.Skip("no libLLVM.so under /root/.rustup")
	return ""
}

// BenchmarkRows reads libLLVM.so's .eh_frame and walks every row of every
// FDE. MB/s counts the section's bytes; allocs/row should be 0.
func BenchmarkRows(b *testing.B) {
	path := largestEHFrame(b)
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".eh_frame")
	data, err := sec.Data()
	if err != nil {
		b.Fatal(err)
	}
	ptr := PointerContext{Order: f.ByteOrder, AddrSize: 8, SectionAddr: sec.Addr, Indirect: indirectReader(f)}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	var rows, fdes int
	var it RowIterator
	for i := 0; i < b.N; i++ {
		frames, err := ReadSection(data, EHFrame, ptr)
		if err != nil {
			b.Fatal(err)
		}
		rows, fdes = 0, len(frames.FDEs)
		for _, fde := range frames.FDEs {
			it.Reset(frames, fde)
			for {
				_, err := it.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				rows++
			}
		}
	}
	reportCPU(b, cpu0, int64(len(data)))
	b.ReportMetric(float64(rows), "rows/op")
	b.ReportMetric(float64(fdes), "FDEs/op")
}

// BenchmarkRowsOnly walks the rows of an already read section: the cost of
// the evaluator alone, which must not allocate. "fast" is RowIterator as
// it runs, its fast path (fast.go) taking the instructions it can;
// "general" decodes every instruction with the InstructionReader, the
// measure of what the fast path is worth (docs/performance.md).
func BenchmarkRowsOnly(b *testing.B) {
	b.Run("fast", func(b *testing.B) { benchRowsOnly(b, false) })
	b.Run("general", func(b *testing.B) { benchRowsOnly(b, true) })
}

func benchRowsOnly(b *testing.B, general bool) {
	path := largestEHFrame(b)
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	frames, err := Read(f, EHFrame)
	if err != nil {
		b.Fatal(err)
	}
	sec := f.Section(".eh_frame")
	b.SetBytes(int64(sec.Size))
	b.ReportAllocs()
	it := RowIterator{slow: general}
	b.ResetTimer()
	cpu0 := cpuTime()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	rows := 0
	for i := 0; i < b.N; i++ {
		rows = 0
		for _, fde := range frames.FDEs {
			it.Reset(frames, fde)
			for {
				_, err := it.Next()
				if err != nil {
					break
				}
				rows++
			}
		}
	}
	reportCPU(b, cpu0, int64(sec.Size))
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(rows), "rows/op")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(rows*b.N), "allocs/row")
}

// BenchmarkRead reads libLLVM.so's .eh_frame into CIEs and FDEs only.
func BenchmarkRead(b *testing.B) {
	path := largestEHFrame(b)
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".eh_frame")
	data, err := sec.Data()
	if err != nil {
		b.Fatal(err)
	}
	ptr := PointerContext{Order: f.ByteOrder, AddrSize: 8, SectionAddr: sec.Addr, Indirect: indirectReader(f)}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := ReadSection(data, EHFrame, ptr); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, int64(len(data)))
}

// BenchmarkCutWeighted cuts libLLVM.so's .eh_frame as LowerScan does for
// two workers: the walk of the entry headers that runs before any worker
// starts (docs/performance.md, "Where the time goes").
func BenchmarkCutWeighted(b *testing.B) {
	f, err := elf.Open(largestEHFrame(b))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fr, err := Open(f, EHFrame)
	if err != nil {
		b.Fatal(err)
	}
	weights := []int{4, 4, 3, 3, 2, 2, 1, 1}
	b.SetBytes(int64(len(fr.Data)))
	var fdes []int
	for b.Loop() {
		_, fdes = fr.CutWeighted(weights)
	}
	n := 0
	for _, k := range fdes {
		n += k
	}
	b.ReportMetric(float64(n), "FDEs")
}

// BenchmarkCutByIndex cuts libLLVM.so's .eh_frame as LowerScan does for
// two workers, from the table of its .eh_frame_hdr (the file read into
// memory, as it would be mapped): what runs before any worker starts in
// place of BenchmarkCutWeighted's walk.
func BenchmarkCutByIndex(b *testing.B) {
	path := largestEHFrame(b)
	file, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fr, err := OpenMapped(f, EHFrame, file)
	if err != nil {
		b.Fatal(err)
	}
	weights := []int{4, 4, 3, 3, 2, 2, 1, 1}
	var fdes []int
	for b.Loop() {
		var ok bool
		if _, fdes, ok = fr.CutByIndex(weights); !ok {
			b.Fatal("no .eh_frame_hdr table")
		}
	}
	n := 0
	for _, k := range fdes {
		n += k
	}
	b.ReportMetric(float64(n), "FDEs")
}
