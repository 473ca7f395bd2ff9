package cfi

import (
	"debug/elf"
	"io"
	"path/filepath"
	"testing"
)

// largestEHFrame returns rust's libLLVM.so (the largest .eh_frame on the
// development machine: 7.7 MB, 160,805 FDEs), or skips.
func largestEHFrame(b *testing.B) string {
	m, _ := filepath.Glob("/root/.rustup/toolchains/*/lib/libLLVM*.so*")
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
	b.ReportMetric(float64(rows), "rows/op")
	b.ReportMetric(float64(fdes), "FDEs/op")
}

// BenchmarkRowsOnly walks the rows of an already read section: the cost of
// the evaluator alone, which must not allocate.
func BenchmarkRowsOnly(b *testing.B) {
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
	var it RowIterator
	b.ResetTimer()
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
	b.ReportMetric(float64(rows), "rows/op")
}
