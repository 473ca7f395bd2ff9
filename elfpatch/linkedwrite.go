package elfpatch

// Writing a linked file's plan (linkedPlan, planned in linked.go) to its
// output: whole (write, writeFrom: the input's bytes between the chunks and
// the chunks, holes left for runs of zeros), or over a copy of the input
// (writeOverCopy: only the chunks).

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/sframe-gen/sframe-gen/elfpatch/sparse"
)

func (p *linkedPlan) write(in, out *os.File) error {
	if err := empty(out); err != nil {
		return err
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := sparse.Copy(out, in, int64(p.copyEnd)); err != nil {
		return err
	}
	return p.writeChunks(out)
}

// writeFrom is write for an input held in memory (data): the output's
// pieces (the input's bytes between the chunks, and the chunks) are
// written with one system call, not copied, patched in pieces and cut (a
// small shared library: 2 system calls instead of 17), and not put
// together in a buffer first. A run of zeros of holeBytes or more (before
// a PT_LOAD aligned to 2 MiB, say) is left as a hole, as writeOverCopy
// leaves it: a call more after it (or a Truncate at the end), no
// megabytes of zeros.
func (p *linkedPlan) writeFrom(data []byte, out *os.File) error {
	if uint64(len(data)) < p.copyEnd {
		return fmt.Errorf("copying input: it has %d bytes, want %d", len(data), p.copyEnd)
	}
	for _, c := range p.chunks {
		if e := c.off + uint64(len(c.data)); e > p.end {
			return fmt.Errorf("internal error: chunk at %#x past output end %#x", c.off, p.end)
		}
	}
	if err := empty(out); err != nil {
		return err
	}
	written := uint64(0) // where the last run ends
	for _, r := range p.runs(data) {
		if err := writeAllAt(out, r.pieces, int64(r.off)); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		written = r.end
	}
	if written < p.end {
		if err := out.Truncate(int64(p.end)); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	return nil
}

// holeBytes is the shortest run of zeros writeFrom leaves as a hole
// rather than writes.
const holeBytes = 4096

// outputRun is a part of the output written at once: pieces from off to
// end, one after the other.
type outputRun struct {
	off, end uint64
	pieces   [][]byte
}

// runs returns the output as runs to write, each of pieces: the input's
// bytes (zeros past copyEnd) and the chunks, each chunk over the input
// and over the chunks before it (the program header table over the end of
// a section moved away, say). Between two runs, and after the last, are
// zeros left to the file system.
func (p *linkedPlan) runs(data []byte) []outputRun {
	// The output's pieces are the spans between any two of these offsets.
	bounds := make([]uint64, 0, 2*len(p.chunks)+3)
	bounds = append(bounds, 0, min(p.copyEnd, p.end), p.end)
	for _, c := range p.chunks {
		bounds = append(bounds, c.off, c.off+uint64(len(c.data)))
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	// A span's bytes come from the last chunk over it, else the input
	// (fromInput) or zeros (fromZeros); spans of one source in a row are
	// one piece.
	const fromInput, fromZeros = -1, -2
	type span struct {
		src      int
		from, to uint64
	}
	spans := make([]span, 0, len(bounds))
	for i := 0; i+1 < len(bounds); i++ {
		from, to := bounds[i], bounds[i+1]
		src := fromZeros
		if from < p.copyEnd {
			src = fromInput
		}
		for j := len(p.chunks) - 1; j >= 0; j-- {
			if c := p.chunks[j]; c.off <= from && to <= c.off+uint64(len(c.data)) {
				src = j
				break
			}
		}
		if n := len(spans); n > 0 && spans[n-1].src == src {
			spans[n-1].to = to
			continue
		}
		spans = append(spans, span{src, from, to})
	}
	var runs []outputRun
	var cur outputRun
	for _, s := range spans {
		var b []byte
		switch s.src {
		case fromInput:
			b = data[s.from:s.to]
		case fromZeros:
			if s.to-s.from >= holeBytes {
				if len(cur.pieces) > 0 {
					runs = append(runs, cur)
				}
				cur = outputRun{off: s.to, end: s.to}
				continue
			}
			b = make([]byte, s.to-s.from)
		default:
			c := p.chunks[s.src]
			b = c.data[s.from-c.off : s.to-c.off]
		}
		cur.pieces = append(cur.pieces, b)
		cur.end = s.to
	}
	if len(cur.pieces) > 0 {
		runs = append(runs, cur)
	}
	return runs
}

// empty makes out empty: truncated to size 0, unless it is already empty.
// A new file is not truncated: ext4 marks a file truncated to size 0 to be
// written out at its last close (auto_da_alloc, for a file rewritten in
// place), which started the writes of every new output file within the
// run (a tree written with --output-dir: 164 MiB sent to the device before
// the batch ended; cp -a sends none).
func empty(out *os.File) error {
	st, err := out.Stat()
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		return nil
	}
	return out.Truncate(0)
}

// writeOverCopy is write for an out that already starts with a copy of in.
func (p *linkedPlan) writeOverCopy(in, out *os.File) error {
	st, err := out.Stat()
	if err != nil {
		return err
	}
	if uint64(st.Size()) < p.copyEnd {
		return fmt.Errorf("output holds %d bytes of the input's copy, want at least %d", st.Size(), p.copyEnd)
	}
	// Input bytes past copyEnd are not part of the output: cut them (the
	// final Truncate zero-fills what no chunk covers, as write leaves it).
	if err := truncate(out, st.Size(), int64(p.copyEnd)); err != nil {
		return err
	}
	return p.writeChunks(out)
}

// writeChunks writes the chunks over the copied prefix and sets the
// output's size.
func (p *linkedPlan) writeChunks(out *os.File) error {
	for _, c := range p.chunks {
		if _, err := out.WriteAt(c.data, int64(c.off)); err != nil {
			return fmt.Errorf("writing output at offset %#x: %w", c.off, err)
		}
		if e := c.off + uint64(len(c.data)); e > p.end {
			return fmt.Errorf("internal error: chunk at %#x past output end %#x", c.off, p.end)
		}
	}
	st, err := out.Stat()
	if err != nil {
		return err
	}
	return truncate(out, st.Size(), int64(p.end))
}

// truncate sets the size of out, size bytes long, to n: unless it is n
// already. At every call that sets a file's size, even to the size it
// has, XFS writes out the data past what its disk holds of the file and
// waits for it (the batch on a tree: 52 ms of its threads' time blocked
// there, 91 waits).
func truncate(out *os.File, size, n int64) error {
	if size == n {
		return nil
	}
	return out.Truncate(n)
}
