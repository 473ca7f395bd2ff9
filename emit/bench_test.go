package emit

import (
	"io"
	"os"
	"testing"
)

// largestGolden returns the biggest raw .sframe section among the golden
// files.
func largestGolden(b *testing.B) []byte {
	var best []byte
	for _, g := range goldenFiles(b) {
		raw, _, _, ok := sframeOf(b, g.elf)
		if ok && len(raw) > len(best) {
			best = raw
		}
	}
	return best
}

// benchSFrame returns the section the benchmarks that take one measure:
// the one in the file $EMIT_BENCH_SFRAME (such as libLLVM.so's, made with
// sframe-gen --raw -o FILE), else the biggest golden one.
func benchSFrame(b *testing.B) []byte {
	p := os.Getenv("EMIT_BENCH_SFRAME")
	if p == "" {
		return largestGolden(b)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkDecode(b *testing.B) {
	data := largestGolden(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	sec, err := Decode(largestGolden(b))
	if err != nil {
		b.Fatal(err)
	}
	enc, _ := sec.Encode()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sec.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDump(b *testing.B) {
	data := largestGolden(b)
	sec, err := Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Dump(io.Discard, sec, 0, ".sframe"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReaderIndex builds the search index of a Reader (the bucket
// table and the search entries) for BenchmarkNewReader's section, and
// reports its bytes per function: the part of NewReader that makes a
// lookup read one bucket and one line of entries rather than binary
// search the functions.
func BenchmarkReaderIndex(b *testing.B) {
	data := benchSFrame(b)
	r, err := NewReader(data, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.shift, r.bucket, r.groups, r.ents = 0, nil, nil, nil
		r.makeBuckets()
		r.makeEntries()
	}
	b.ReportMetric(float64(len(r.bucket)+4*len(r.groups)+8*len(r.ents))/float64(r.NumFuncs()), "bytes/func")
}

// BenchmarkNewReader decodes a section and builds its Reader: the biggest
// golden section, or the section in the file $EMIT_BENCH_SFRAME (such as
// libLLVM.so's, made with sframe-gen --raw -o FILE, read at address 0).
func BenchmarkNewReader(b *testing.B) {
	data := benchSFrame(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewReader(data, 0); err != nil {
			b.Fatal(err)
		}
	}
}
