package elfpatch

// builder turns one placement decision of a planner into a linkedPlan: the
// new program and section header tables and the bytes to write.
type builder struct {
	pl     *planner
	f      *file
	plan   *linkedPlan
	layout *Layout

	grown map[int]uint64 // PT_LOAD index -> new p_filesz (= p_memsz)

	phExtra   int    // program headers to add
	phoff     uint64 // program header table offset and address
	phaddr    uint64
	phPending bool // the table goes into the new PT_LOAD

	// moved are the sections (by index) moved to make room after the
	// program header table, and how far; movedProgs the same for program
	// headers.
	moved      map[int]uint64
	movedProgs map[int]uint64
	dropProgs  map[int]bool   // PT_NOTEs merged into another
	noteGrow   map[int]uint64 // PT_NOTE index -> bytes it grows by
	phDropped  int

	sfSet         bool
	sfOff, sfAddr uint64
	withLoad      bool
}

func newBuilder(pl *planner) *builder {
	b := &builder{pl: pl, f: pl.f, plan: &linkedPlan{}, grown: map[int]uint64{},
		moved: map[int]uint64{}, movedProgs: map[int]uint64{}, dropProgs: map[int]bool{}, noteGrow: map[int]uint64{}}
	b.layout = &b.plan.layout
	b.layout.GrownLoad = -1
	b.layout.Size = pl.size
	b.phoff = pl.f.hdr.phoff
	for _, li := range pl.loads {
		p := &pl.f.progs[li]
		if b.phoff >= p.Off && b.phoff < p.Off+p.Filesz {
			b.phaddr = p.Vaddr + (b.phoff - p.Off)
			break
		}
	}
	for _, p := range pl.f.progs {
		if p.Type == ptPhdr {
			b.phaddr = p.Vaddr
		}
	}
	return b
}

func (b *builder) setSFrame(off, addr uint64) {
	b.sfSet, b.sfOff, b.sfAddr = true, off, addr
	b.layout.Offset, b.layout.Addr = off, addr
}

// newLoad asks for a new PT_LOAD at the end of the file; finish places it.
func (b *builder) newLoad() { b.withLoad = true }

// grow appends n bytes aligned to align to the image of PT_LOAD li, if the
// free space after it allows, and returns their offset and address.
func (b *builder) grow(li int, n, align uint64) (off, addr uint64, ok bool) {
	p := &b.f.progs[li]
	room := b.pl.roomAfter(li)
	filesz, seen := b.grown[li]
	if !seen {
		filesz = p.Filesz
	}
	start := alignUp(p.Off+filesz, align)
	if start+n < start || start+n-(p.Off+p.Filesz) > room {
		return 0, 0, false
	}
	b.grown[li] = start + n - p.Off
	if b.layout.GrownLoad < 0 || b.layout.GrownLoad == li {
		b.layout.GrownLoad = li
	}
	return start, p.Vaddr + (start - p.Off), true
}

// growReadOnly grows the first read-only PT_LOAD (the text's neighbour, as
// ld places .sframe) that has room for n bytes aligned to 8.
func (b *builder) growReadOnly(n uint64) (off, addr uint64, ok bool) {
	for _, li := range b.pl.loads {
		if b.f.progs[li].Flags != pfR {
			continue
		}
		if off, addr, ok := b.grow(li, n, 8); ok {
			return off, addr, true
		}
	}
	return 0, 0, false
}

// placePhdrs makes room for extra program headers in place, when the bytes
// after the table are free and loaded. Otherwise the table is left to the
// new PT_LOAD, at whose start it goes: BFD (strip, objcopy) moves a table
// that is inside the first PT_LOAD but not right after the ELF header back
// there, shifting the sections after it, while it keeps a table that starts
// its own PT_LOAD.
func (b *builder) placePhdrs(extra int) bool {
	f := b.f
	b.phExtra = extra
	old := uint64(len(f.progs)) * phdrSize
	sz := uint64(len(f.progs)+extra) * phdrSize
	for _, li := range b.pl.loads {
		p := &f.progs[li]
		if f.hdr.phoff >= p.Off && f.hdr.phoff+sz <= p.Off+p.Filesz && b.pl.isFree(f.hdr.phoff+old, f.hdr.phoff+sz) {
			b.phoff, b.phaddr = f.hdr.phoff, p.Vaddr+(f.hdr.phoff-p.Off)
			b.phPending = false
			return true
		}
	}
	if b.moveAfterPhdrs(extra) {
		b.phPending = false
		return true
	}
	b.phPending = true
	return false
}

// finish lays out the appended data and builds the header tables.
// finish lays out what the builder decided: the section header table with
// .sframe, the bytes kept from the input, the new PT_LOAD, then the program
// and ELF headers, as chunks written over the copy of the input.
func (b *builder) finish() *linkedPlan {
	h := b.f.hdr
	t := b.sectionTable()
	pos := b.keptInput(&t, &h)
	if t.shstrGrows && !t.shstrInPlace && b.f.shstrndx != 0 {
		// The grown copy goes where the input ends, before a new
		// PT_LOAD: a re-run finds the input's size there (rerun.go).
		t.shstrOff, t.shstrPlaced = pos, true
		pos += uint64(len(t.shstr))
	}
	var newLoad prog
	if b.withLoad {
		newLoad, pos = b.addLoad(pos)
	}
	b.layout.PhdrsOffset = b.phoff
	pos = b.writeSections(&t, &h, pos)
	b.writeHeaders(&h, newLoad)
	pos = max(pos, b.sfOff+b.pl.size)
	b.plan.end = max(pos, b.plan.copyEnd)
	return b.plan
}

// sectTable is the output's section header table as finish builds it.
type sectTable struct {
	sects        []sect
	shstr        []byte // the section-name table
	shstrGrows   bool   // ".sframe" was added to it
	appendMode   bool   // the table is written after everything else
	shstrOff     uint64 // where the section-name table goes
	shstrInPlace bool   // it grows where it is, at the end of the content
	shstrPlaced  bool   // its grown copy is placed, at the end of the input
}

// sectionTable returns the input's section headers with .sframe's (set,
// or appended, its name added to the section-name table when missing).
func (b *builder) sectionTable() sectTable {
	f, pl := b.f, b.pl
	t := sectTable{sects: append([]sect(nil), f.sects...), shstr: f.shstrtab}
	sectsAppend := false
	if len(t.sects) > 0 {
		sf := sect{Type: shtGNUSFrame, Flags: shfAlloc, Addralign: 8}
		if pl.sfIdx >= 0 {
			sf.Name = t.sects[pl.sfIdx].Name
		} else if i := findName(t.shstr, nameSFrame); i >= 0 && f.shstrndx != 0 {
			sf.Name = uint32(i)
		} else if f.shstrndx != 0 {
			sf.Name = uint32(len(t.shstr))
			t.shstr = append(append(append([]byte(nil), t.shstr...), nameSFrame...), 0)
			t.shstrGrows = true
		}
		if pl.sfIdx >= 0 {
			t.sects[pl.sfIdx] = sf
		} else {
			t.sects = append(t.sects, sf)
			sectsAppend = true
		}
	}
	t.appendMode = b.withLoad || sectsAppend
	return t
}

// keptInput decides what of the input is kept: all of it, or all but a
// section header table (and section-name table) at its end, which are
// rewritten. It returns where the output's new bytes start.
func (b *builder) keptInput(t *sectTable, h *header) uint64 {
	f, pl, plan := b.f, b.pl, b.plan
	size := uint64(f.size)
	plan.copyEnd = size
	pos := size
	if f.shstrndx != 0 {
		t.shstrOff = f.sects[f.shstrndx].Off
	}
	if t.appendMode && h.shoff != 0 {
		content := uint64(0)
		for _, u := range pl.used {
			if u.start != h.shoff && u.end > content {
				content = u.end
			}
		}
		if h.shoff >= content && h.shoff+uint64(len(f.sects))*shdrSize == size {
			plan.copyEnd, pos = h.shoff, h.shoff
			if t.shstrGrows && f.shstrndx != 0 && t.shstrOff+f.sects[f.shstrndx].Size == content {
				plan.copyEnd = t.shstrOff
				pos = t.shstrOff + uint64(len(t.shstr))
				t.shstrInPlace = true
			}
		}
	}
	return pos
}

// addLoad makes the new PT_LOAD, above every other one, from pos on: the
// program header table when it moves there, and .sframe when no other
// place was found. It returns the PT_LOAD and where the bytes after it go.
func (b *builder) addLoad(pos uint64) (prog, uint64) {
	f, pl := b.f, b.pl
	ps := pl.pageSize
	top := uint64(0)
	for _, li := range pl.loads {
		p := &f.progs[li]
		top = max(top, p.Vaddr+p.Memsz)
	}
	v0 := alignUp(top, ps)
	var fo, va uint64
	first := &f.progs[pl.loads[0]]
	delta := first.Vaddr - first.Off
	if b.phPending && v0 >= delta {
		// Keep vaddr - offset equal to the first PT_LOAD's, so that
		// kernels before 5.18, which compute AT_PHDR as the first
		// load's bias + e_phoff, still find the table.
		fo = alignUp(max(pos, v0-delta), ps)
		va = fo + delta
	}
	if !b.phPending || v0 < delta || fo-pos > maxPadding {
		// No padding in the file: the load starts where the input's
		// bytes end (aligned to 8, the section's alignment), at the address above every other load's page that
		// is congruent to it (as ld places a writable PT_LOAD), so a
		// file with 64 KiB pages does not grow by up to 64 KiB.
		fo = alignUp(pos, 8)
		va = v0 + fo&(ps-1)
	}
	cur := fo
	if b.phPending {
		b.phoff, b.phaddr = fo, va
		b.layout.PhdrsMoved = true
		cur += uint64(len(f.progs)-b.phDropped+b.phExtra) * phdrSize
	}
	if !b.sfSet {
		o := alignUp(cur, 8)
		b.setSFrame(o, va+(o-fo))
		cur = o + pl.size
	}
	b.layout.NewLoad = true
	return prog{Type: ptLoad, Flags: pfR, Off: fo, Vaddr: va, Paddr: va, Filesz: cur - fo, Memsz: cur - fo, Align: ps}, cur
}

// writeSections adds the section-name table (when it grew) and the section
// header table to the plan, with .sframe's header and the moved sections'.
// It returns where the bytes after them go.
func (b *builder) writeSections(t *sectTable, h *header, pos uint64) uint64 {
	f, pl, plan := b.f, b.pl, b.plan
	sects := t.sects
	if t.shstrGrows {
		if !t.shstrInPlace && !t.shstrPlaced {
			t.shstrOff = pos
			pos += uint64(len(t.shstr))
		}
		plan.chunks = append(plan.chunks, chunk{t.shstrOff, t.shstr})
		sects[f.shstrndx].Off = t.shstrOff
		sects[f.shstrndx].Size = uint64(len(t.shstr))
	}
	for i, d := range b.moved {
		sects[i].Off += d
		sects[i].Addr += d
	}
	plan.moved = b.moved
	if len(sects) == 0 {
		return pos
	}
	sf := &sects[len(sects)-1]
	if pl.sfIdx >= 0 {
		sf = &sects[pl.sfIdx]
	}
	sf.Addr, sf.Off, sf.Size = b.sfAddr, b.sfOff, pl.size
	if t.appendMode {
		h.shoff = alignUp(pos, 8)
	}
	tab := encodeSects(h, sects, f.shstrndx)
	plan.chunks = append(plan.chunks, chunk{h.shoff, tab})
	return max(pos, h.shoff+uint64(len(tab)))
}

// writeHeaders adds the program header table (moved, grown, merged and new
// entries: PT_PHDR, PT_GNU_SFRAME, the new PT_LOAD) and the ELF header to
// the plan.
func (b *builder) writeHeaders(h *header, newLoad prog) {
	f, pl, plan := b.f, b.pl, b.plan
	// Room for the new PT_LOAD and PT_GNU_SFRAME: no copy as they go in.
	progs := append(make([]prog, 0, len(f.progs)+2), f.progs...)
	for i, d := range b.movedProgs {
		progs[i].Off += d
		progs[i].Vaddr += d
		progs[i].Paddr += d
	}
	for li, sz := range b.grown {
		progs[li].Filesz, progs[li].Memsz = sz, sz
	}
	for i, g := range b.noteGrow {
		progs[i].Filesz += g
		progs[i].Memsz += g
	}
	n := len(f.progs) - b.phDropped + b.phExtra
	for i := range progs {
		p := &progs[i]
		switch {
		case p.Type == ptPhdr:
			p.Paddr += b.phaddr - p.Vaddr
			p.Off, p.Vaddr = b.phoff, b.phaddr
			// The sizes change by what the table does (from ld they are
			// its size): a re-run rebuilds them from the output.
			was, is := uint64(len(f.progs))*phdrSize, uint64(n)*phdrSize
			p.Filesz, p.Memsz = p.Filesz-was+is, p.Memsz-was+is
			// The Linux kernel registers the SFrame section for every
			// PF_X program header, the table's included, which then
			// takes the text's place when it lies in the text mapping.
			// No loader reads PT_PHDR's flags.
			if p.Flags&pfX != 0 {
				p.Flags &^= pfX
				b.layout.PhdrExecCleared = true
			}
		case i == pl.ptIdx:
			*p = b.sframeProg()
		}
	}
	// Drop merged notes; insert the new load after the last one.
	kept := make([]prog, 0, len(progs)+2)
	for i := range progs {
		if !b.dropProgs[i] {
			kept = append(kept, progs[i])
		}
		if b.withLoad && i == pl.loads[len(pl.loads)-1] {
			kept = append(kept, newLoad)
		}
	}
	progs = kept
	if pl.ptIdx < 0 {
		progs = insertProg(progs, sframeSlot(progs), b.sframeProg())
	}
	h.phoff, h.phnum = b.phoff, uint16(len(progs))
	pt := make([]byte, len(progs)*phdrSize)
	for i := range progs {
		encodeProg(h.order, pt[i*phdrSize:], &progs[i])
	}
	plan.chunks = append(plan.chunks, chunk{b.phoff, pt})
	eh := make([]byte, ehdrSize)
	encodeHeader(eh, h)
	plan.chunks = append(plan.chunks, chunk{0, eh})
}

func (b *builder) sframeProg() prog {
	return prog{Type: ptGNUSFrame, Flags: pfR, Off: b.sfOff, Vaddr: b.sfAddr, Paddr: b.sfAddr,
		Filesz: b.pl.size, Memsz: b.pl.size, Align: 8}
}

// sframeSlot is where ld puts PT_GNU_SFRAME: after PT_GNU_EH_FRAME, else
// after PT_GNU_PROPERTY, else before PT_GNU_STACK / PT_GNU_RELRO, else last.
func sframeSlot(progs []prog) int {
	for _, t := range []uint32{ptGNUEHFrame, ptGNUProperty} {
		for i := len(progs) - 1; i >= 0; i-- {
			if progs[i].Type == t {
				return i + 1
			}
		}
	}
	for i := range progs {
		if progs[i].Type == ptGNUStack || progs[i].Type == ptGNURelro {
			return i
		}
	}
	return len(progs)
}

func insertProg(progs []prog, at int, p prog) []prog {
	progs = append(progs, prog{})
	copy(progs[at+1:], progs[at:])
	progs[at] = p
	return progs
}
