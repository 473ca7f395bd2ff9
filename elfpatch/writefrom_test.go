package elfpatch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFrom writes plans of chunks over an input held in memory and
// compares the file with the input's prefix and each chunk laid over it
// in turn, made byte by byte here: chunks in any order, overlapping (the
// later one wins), past the input's end (zeros between), more pieces
// than one system call takes, and a file that held bytes before.
func TestWriteFrom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(r.IntN(255) + 1)
	}
	fill := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	many := make([]chunk, 0, 1500)
	for i := range 1500 {
		many = append(many, chunk{uint64(3 * i), fill(1, byte(i%200+1))})
	}
	cases := []struct {
		name string
		plan linkedPlan
		hole uint64 // bytes of zeros that must take no room on disk
	}{
		{"no chunks", linkedPlan{copyEnd: 5000, end: 5000}, 0},
		{"prefix cut", linkedPlan{copyEnd: 1200, end: 1200}, 0},
		{"chunks out of order", linkedPlan{copyEnd: 5000, end: 5000, chunks: []chunk{{4000, fill(10, 0xa1)}, {0, fill(64, 0xb2)}, {64, fill(8, 0xc3)}}}, 0},
		{"past the input, zeros between", linkedPlan{copyEnd: 4096, end: 6000, chunks: []chunk{{100, fill(3, 0xd4)}, {5000, fill(1000, 0xe5)}}}, 0},
		{"zeros at the end", linkedPlan{copyEnd: 3000, end: 4500, chunks: []chunk{{3500, fill(10, 0xf6)}}}, 0},
		{"overlapping chunks", linkedPlan{copyEnd: 5000, end: 5000, chunks: []chunk{{100, fill(50, 0x17)}, {120, fill(10, 0x28)}, {110, fill(5, 0x39)}}}, 0},
		{"a chunk over the end of another", linkedPlan{copyEnd: 5000, end: 5000, chunks: []chunk{{0x350, fill(0x40, 0x4a)}, {0x40, fill(0x348, 0x5b)}, {0x0, fill(0x40, 0x6c)}}}, 0},
		{"a hole before the last chunk", linkedPlan{copyEnd: 5000, end: 5000 + 1<<20 + 300, chunks: []chunk{{5000 + 1<<20, fill(300, 0x7d)}, {0, fill(64, 0x8e)}}}, 1 << 20},
		{"a hole at the end", linkedPlan{copyEnd: 4000, end: 4000 + 1<<20, chunks: []chunk{{3990, fill(20, 0x9f)}}}, 1<<20 - 10},
		{"zeros just short of a hole", linkedPlan{copyEnd: 2000, end: 2000 + holeBytes - 1 + 8, chunks: []chunk{{2000 + holeBytes - 1, fill(8, 0xa0)}}}, 0},
		{"more pieces than one call takes", linkedPlan{copyEnd: 5000, end: 5000, chunks: many}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := make([]byte, c.plan.end)
			for i := range min(c.plan.copyEnd, c.plan.end) {
				want[i] = data[i]
			}
			for _, ch := range c.plan.chunks {
				for i, b := range ch.data {
					want[ch.off+uint64(i)] = b
				}
			}
			name := filepath.Join(t.TempDir(), "out")
			if err := os.WriteFile(name, fill(9000, 0xff), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := os.OpenFile(name, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			if err := c.plan.writeFrom(data, out); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%d bytes written, want %d; first difference at %s", len(got), len(want), firstDiff(got, want))
			}
			st, err := out.Stat()
			if err != nil {
				t.Fatal(err)
			}
			// Blocks of 4 KiB at most on either side of the hole.
			if used := uint64(st.Sys().(*syscall.Stat_t).Blocks) * 512; c.hole > 0 && used+c.hole > uint64(len(want))+2*4096 {
				t.Errorf("%d bytes take %d on disk: the %d bytes of zeros were written, not left as a hole", len(want), used, c.hole)
			}
		})
	}
}

// firstDiff says where a and b first differ.
func firstDiff(a, b []byte) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%#x (%#x, want %#x)", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("%#x (one ends)", min(len(a), len(b)))
}
