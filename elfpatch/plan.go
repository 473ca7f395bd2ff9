package elfpatch

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/sframe-gen/sframe-gen/elfpatch/sparse"
)

// LinkedPatch is a [PatchLinked] planned but not written: the layout is
// chosen and the section encoded, so a caller can first ask whether the
// output would differ from the input at all ([LinkedPatch.Unchanged]) and
// leave an up-to-date file untouched.
type LinkedPatch struct {
	in     *os.File
	data   io.ReaderAt // in's bytes, where they are read from
	bytes  []byte      // in's bytes when they were given, and in has no holes
	inSize int64
	plan   *linkedPlan
}

// PlanLinked plans PatchLinked of in with a section of size bytes, which
// encode gives (in pieces) for the section's final address. data, when
// not nil, holds in's bytes already read (the whole file): the headers
// are parsed from it, not read again.
func PlanLinked(in *os.File, data []byte, size int, encode func(addr uint64) ([][]byte, error)) (*LinkedPatch, error) {
	st, err := in.Stat()
	if err != nil {
		return nil, err
	}
	var r io.ReaderAt = in
	if data != nil {
		if int64(len(data)) != st.Size() {
			return nil, fmt.Errorf("%d bytes given for a file of %d", len(data), st.Size())
		}
		r = bytes.NewReader(data)
	}
	p, err := planPatch(r, st.Size(), size, encode)
	if err != nil {
		return nil, err
	}
	lp := &LinkedPatch{in: in, data: r, inSize: st.Size(), plan: p}
	if !sparse.MayHaveHoles(st) {
		lp.bytes = data // no holes to keep
	}
	return lp, nil
}

// Layout is where the section goes and what the patch changes.
func (p *LinkedPatch) Layout() Layout { return p.plan.layout }

// Unchanged reports whether the patched file would be byte for byte the
// input: same size, nothing cut, and every byte the patch writes already
// there (a section generated before from the same CFI, in place).
func (p *LinkedPatch) Unchanged() (bool, error) {
	pl := p.plan
	if pl.end != uint64(p.inSize) {
		return false, nil
	}
	if pl.copyEnd < pl.end {
		// Past copyEnd the output is zeros where no chunk is.
		if zero, err := pl.zerosPastCopy(p.data); err != nil || !zero {
			return false, err
		}
	}
	// Read and compared a piece at a time: a section of megabytes needs
	// no buffer of its size.
	const piece = 64 << 10
	var buf []byte
	for _, c := range pl.chunks {
		for at := 0; at < len(c.data); at += piece {
			want := c.data[at:min(at+piece, len(c.data))]
			if cap(buf) < len(want) {
				buf = make([]byte, min(piece, len(c.data)))
			}
			b := buf[:len(want)]
			if n, err := p.data.ReadAt(b, int64(c.off)+int64(at)); n != len(b) {
				return false, fmt.Errorf("reading input at offset %#x: %w", c.off+uint64(at), err)
			}
			if !bytes.Equal(b, want) {
				return false, nil
			}
		}
	}
	return true, nil
}

// Write writes the patched file to out (emptied first), copying the
// unchanged byte ranges of the input file to file; an input given in
// memory to PlanLinked (without holes) is patched in memory and written
// at once.
func (p *LinkedPatch) Write(out *os.File) error {
	if p.bytes != nil {
		return p.plan.writeFrom(p.bytes, out)
	}
	return p.plan.write(p.in, out)
}

// PlaceLinked says where PatchLinked would put a section of size bytes in
// the linked file in (of inSize bytes), without encoding or writing
// anything: Layout.Addr is the address the section's PC-relative fields
// must assume.
func PlaceLinked(in io.ReaderAt, inSize int64, size int) (Layout, error) {
	p, _, _, err := planInput(in, inSize, uint64(size))
	if err != nil {
		return Layout{}, err
	}
	return p.layout, nil
}

// zerosPastCopy reports whether in holds zeros wherever the output has
// them past copyEnd: the bytes from copyEnd to end that no chunk covers.
func (p *linkedPlan) zerosPastCopy(in io.ReaderAt) (bool, error) {
	covered := make([]span, 0, len(p.chunks))
	for _, c := range p.chunks {
		covered = append(covered, span{c.off, c.off + uint64(len(c.data))})
	}
	slices.SortFunc(covered, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	buf := make([]byte, 64<<10)
	at := p.copyEnd
	check := func(to uint64) (bool, error) {
		for at < to {
			n := min(uint64(len(buf)), to-at)
			if k, err := in.ReadAt(buf[:n], int64(at)); k != int(n) {
				return false, fmt.Errorf("reading input at offset %#x: %w", at, err)
			}
			for _, c := range buf[:n] {
				if c != 0 {
					return false, nil
				}
			}
			at += n
		}
		return true, nil
	}
	for _, c := range covered {
		if c.start > at {
			if ok, err := check(min(c.start, p.end)); !ok || err != nil {
				return ok, err
			}
		}
		at = max(at, c.end)
	}
	return check(p.end)
}
