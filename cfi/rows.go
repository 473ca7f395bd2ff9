package cfi

// RowIterator executes a CIE's initial instructions then an FDE's
// instructions and yields the rows one at a time, in PC order. Its storage
// (register rules, the remember_state stack) is reused from row to row and,
// through Reset, from FDE to FDE.
type RowIterator struct {
	frames *Frames
	fde    *FDE
}

// Rows returns an iterator over the rows of fde.
func (f *Frames) Rows(fde *FDE) *RowIterator {
	it := &RowIterator{}
	it.Reset(f, fde)
	return it
}

// Reset makes it iterate over the rows of fde, keeping its storage.
func (it *RowIterator) Reset(f *Frames, fde *FDE) {
	it.frames = f
	it.fde = fde
}

// Next returns the next row, or io.EOF after the last one. The first row
// starts at fde.Start and reflects the CIE's initial instructions. The row
// and its Regs are valid until the following call. Errors are *EntryError
// naming the FDE's section offset.
func (it *RowIterator) Next() (*Row, error) {
	panic("not implemented yet")
}
