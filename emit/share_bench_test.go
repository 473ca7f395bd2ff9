package emit

import (
	"cmp"
	"os"
	"slices"
	"testing"
)

// BenchmarkFRESharer shares the FRE data of an unshared section as lower
// does on two workers: its functions appended in 8 parts (FRESharer.Append,
// each part's records in its own array), the section being the biggest
// golden one or the one in the file $EMIT_BENCH_SFRAME (such as
// libLLVM.so's, made with sframe-gen --raw --no-share-fres -o FILE). With $EMIT_BENCH_EVICT set, 8 MiB are written between parts,
// as the lowering of the next part evicts the table from the caches. It
// reports the time and the process's CPU time per function (cpu-ns/FDE,
// the measure to compare on a machine shared with other work).
func BenchmarkFRESharer(b *testing.B) {
	data := benchSFrame(b)
	sec, err := Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	// The records in index order, as lower writes them.
	slices.SortFunc(sec.Index, func(x, y IndexEntry) int { return cmp.Compare(x.FREOffset, y.FREOffset) })
	const parts = 8
	n := len(sec.Index)
	type part struct {
		index []IndexEntry
		data  []byte
	}
	var ps []part
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		start, end := int(sec.Index[lo].FREOffset), len(sec.FREData)
		if hi < n {
			end = int(sec.Index[hi].FREOffset)
		}
		index := slices.Clone(sec.Index[lo:hi])
		for i := range index {
			index[i].FREOffset -= uint32(start)
		}
		ps = append(ps, part{index, slices.Clone(sec.FREData[start:end])})
	}
	var evict []byte
	if os.Getenv("EMIT_BENCH_EVICT") != "" {
		evict = make([]byte, 8<<20)
	}
	s := &Section{Header: sec.Header, Index: make([]IndexEntry, 0, n), FREData: make([]byte, 0, len(sec.FREData))}
	index := make([]IndexEntry, n)
	shared := 0
	b.ReportAllocs()
	cpu := int64(0)
	for b.Loop() {
		s.Index, s.FREData = s.Index[:0], s.FREData[:0]
		sh := NewFRESharer(n)
		for _, p := range ps {
			b.StopTimer()
			for i := range evict {
				evict[i]++
			}
			copy(index, p.index)
			b.StartTimer()
			cpu -= cpuTime()
			s.Index = append(s.Index, index[:len(p.index)]...)
			k, err := sh.Append(s, len(p.index), p.data)
			if err != nil {
				b.Fatal(err)
			}
			shared += k
			cpu += cpuTime()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/FDE")
	b.ReportMetric(float64(len(s.FREData)), "FRE-bytes")
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N)/float64(n), "cpu-ns/FDE")
	}
}
