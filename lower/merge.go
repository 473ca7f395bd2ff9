package lower

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/sframe-gen/sframe-gen/emit"
)

// MergeFDEs says which runs of adjacent functions Options.MergeFDEs writes
// as one FDE: functions whose FREs are the same single row (one FRE, at
// their start, with the same info and data words, and the same FDE
// attributes).
type MergeFDEs uint8

const (
	// MergeNone writes an FDE per function (the default).
	MergeNone MergeFDEs = iota
	// MergeAdjacent merges a function into the one before it when it
	// starts where that one ends.
	MergeAdjacent
	// MergePadding also merges across the alignment padding between two
	// such functions: fewer than maxMergeGap bytes that no function of
	// the CFI covers (lowered or left out) and that are all no-op
	// instructions or zeros (mergePadding). The padding is never
	// executed; the merged FDE describes it with the functions' row.
	MergePadding
	// MergeAll also merges, across padding as MergePadding, functions of
	// several rows whose FRE data no other function has (whose sharing
	// nothing loses) when the FDE of both takes fewer bytes than the two:
	// the next function's FREs follow the first's, moved by its offset
	// (its first left out when it is the first's last row again). An
	// FDE then covers several functions of any shape.
	MergeAll
)

// maxMergeGap bounds the padding MergePadding merges across: alignment
// to 64 bytes at most.
const maxMergeGap = 64

// mergeFDERuns writes each run of adjacent functions of a linked file's
// result that Options.MergeFDEs merges as one FDE: the first function's,
// grown to the end of the last. It runs before the PLT FDEs are appended
// and before the FRE data is shared: the section is rebuilt with the
// FDEs that stay, in their order.
func mergeFDERuns(res *Result, f *elf.File, t Target, opt Options) error {
	if opt.MergeFDEs == MergeNone || t.Relocatable {
		return nil
	}
	sec := res.Section
	n := sec.NumFDEs()
	if n < 2 || len(res.Starts) != n {
		return nil
	}
	fdes := make([]emit.FDE, n)
	for i := range fdes {
		fde, err := sec.FDE(i)
		if err != nil {
			return fmt.Errorf("merging FDEs: %w", err)
		}
		fdes[i] = fde
	}
	// How many functions have each block of FRE data: MergeAll merges
	// only blocks no other function has (their sharing is kept).
	var uses map[string]int
	if opt.MergeFDEs == MergeAll {
		uses = make(map[string]int, n)
		for i := range fdes {
			uses[string(recordKey(&fdes[i], true))]++
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(res.Starts[a], res.Starts[b]) })
	var gaps *gapChecker
	if opt.MergeFDEs != MergeAdjacent {
		gaps = newGapChecker(f, t, res)
	}
	merged := 0
	gone := make([]bool, n) // merged into the FDE of a function before
	head := -1              // the FDE the run so far is merged into
	var headRow []byte
	headAlone := false // head's FRE data is its own (MergeAll)
	for _, i := range order {
		fde := &fdes[i]
		row := singleRow(fde)
		alone := uses != nil && uses[string(recordKey(fde, true))] == 1 && fde.PCType() == emit.PCInc && !fde.Signal() &&
			len(fde.FREs) > 0 && fde.FREs[0].StartAddr == 0
		if head >= 0 {
			h := &fdes[head]
			end := res.Starts[head] + uint64(h.Size)
			start := res.Starts[i]
			touch := start == end || start > end && gaps != nil && gaps.padding(end, start)
			if size := start + uint64(fde.Size) - res.Starts[head]; touch && size <= 0xffffffff {
				switch {
				case row != nil && string(row) == string(headRow):
					h.Size = uint32(size)
					gone[i] = true
					merged++
					continue
				case alone && headAlone && fde.Info&^0xf == h.Info&^0xf && fde.Info2 == h.Info2 && fde.RepSize == h.RepSize:
					if m, ok := mergeRows(h, fde, uint32(start-res.Starts[head]), uint32(size), opt.narrow()); ok {
						*h = m
						gone[i] = true
						merged++
						headRow = singleRow(h)
						continue
					}
				}
			}
		}
		head, headRow, headAlone = i, row, alone
	}
	if merged == 0 {
		return nil
	}
	out := &emit.Section{Header: sec.Header, Trailer: sec.Trailer}
	out.Index = make([]emit.IndexEntry, 0, n-merged)
	starts := make([]uint64, 0, n-merged)
	sources := res.Sources[:0:0]
	for i := range fdes {
		fde := fdes[i]
		if gone[i] {
			continue
		}
		if fde.FREType().Limit() <= uint64(fde.Size) || opt.narrow() {
			// Grown: the type its size asks for, or the narrowest.
			ft := emit.FRETypeFor(fde.Size)
			if opt.narrow() {
				ft = emit.NarrowestFREType(lastStart(&fde))
			}
			fde.Info = fde.Info&^0xf | uint8(ft)
		}
		if err := out.AppendFDE(fde); err != nil {
			return fmt.Errorf("merging FDEs: function at %#x: %w", res.Starts[i], err)
		}
		starts = append(starts, res.Starts[i])
		if len(res.Sources) == n {
			sources = append(sources, res.Sources[i])
		}
	}
	res.Section, res.Starts, res.Merged = out, starts, merged
	if len(res.Sources) == n {
		res.Sources = sources
	}
	res.runs = nil // the parts' sorted runs are of the FDEs before
	return nil
}

// lastStart is the start of f's last FRE, 0 without FREs.
func lastStart(f *emit.FDE) uint32 {
	if len(f.FREs) == 0 {
		return 0
	}
	return f.FREs[len(f.FREs)-1].StartAddr
}

// mergeRows returns the FDE of h followed by g, which starts off bytes
// after h's start, together size bytes: h's FREs that start before off,
// then g's moved by off (g's first left out when it is h's last row
// again, which then covers the padding between them too). ok is false when that takes more bytes
// than the two FDEs (their index entries included), or more FREs than an
// FDE holds.
func mergeRows(h, g *emit.FDE, off, size uint32, narrow bool) (emit.FDE, bool) {
	m := *h
	m.Size = size
	m.FREs = slices.Clone(h.FREs)
	// An FRE of h that starts at its end or past it (gas's trailing
	// row) describes none of its addresses: g's rows take over there.
	for len(m.FREs) > 1 && m.FREs[len(m.FREs)-1].StartAddr >= off {
		m.FREs = m.FREs[:len(m.FREs)-1]
	}
	if len(m.FREs) == 1 && m.FREs[0].StartAddr >= off {
		return emit.FDE{}, false // (h has no address: off is 0)
	}
	for j, e := range g.FREs {
		if j == 0 && len(m.FREs) > 0 && sameRow(&e, &m.FREs[len(m.FREs)-1]) {
			continue
		}
		e.StartAddr += off
		m.FREs = append(m.FREs, e)
	}
	if len(m.FREs) > emit.MaxFREsPerFDE {
		return emit.FDE{}, false
	}
	ft := emit.FRETypeFor(size)
	if narrow {
		ft = emit.NarrowestFREType(lastStart(&m))
	}
	m.Info = m.Info&^0xf | uint8(ft)
	if blockBytes(&m) >= blockBytes(h)+blockBytes(g)+emit.FDEIndexEntrySize {
		return emit.FDE{}, false
	}
	return m, true
}

// sameRow reports whether FREs a and b say the same (their starts aside).
func sameRow(a, b *emit.FRE) bool { return a.Info == b.Info && slices.Equal(a.Words, b.Words) }

// blockBytes is the size of f's attribute record and FREs.
func blockBytes(f *emit.FDE) int {
	n := emit.FDEAttrSize
	as := f.FREType().AddrSize()
	for j := range f.FREs {
		e := &f.FREs[j]
		n += as + 1 + len(e.Words)*e.DataWordSize().Bytes()
	}
	return n
}

// recordKey is f's FRE data as a key: its attribute fields (with the FRE
// type unless sansType) and FREs.
func recordKey(f *emit.FDE, withType bool) []byte {
	info := f.Info
	if !withType {
		info &^= 0xf
	}
	b := []byte{info, f.Info2, f.RepSize}
	for j := range f.FREs {
		e := &f.FREs[j]
		b = binary.LittleEndian.AppendUint32(b, e.StartAddr)
		b = append(b, e.Info)
		for _, w := range e.Words {
			b = binary.LittleEndian.AppendUint32(b, uint32(w))
		}
	}
	return b
}

// singleRow returns f's FRE data but its FRE type (which the merged FDE's
// size decides) when f is a function of one row: PCINC, not a signal
// frame, one FRE at its start; nil otherwise.
func singleRow(f *emit.FDE) []byte {
	if len(f.FREs) != 1 || f.FREs[0].StartAddr != 0 || f.PCType() != emit.PCInc || f.Signal() {
		return nil
	}
	return recordKey(f, false)
}

// gapChecker says whether the bytes between two functions are padding.
type gapChecker struct {
	f    *elf.File
	arch Arch
	// starts and ends are the CFI's functions, lowered or left out,
	// sorted by start; ends[j] is the furthest end of the first j+1.
	starts, ends []uint64
}

// newGapChecker returns a gapChecker for the linked file f, whose
// lowering res left out res.Skipped.
func newGapChecker(f *elf.File, t Target, res *Result) *gapChecker {
	type span struct{ lo, hi uint64 }
	var spans []span
	for i, start := range res.Starts {
		spans = append(spans, span{start, start + uint64(res.Section.Index[i].Size)})
	}
	for _, s := range res.Skipped {
		if s.FDE != nil && s.FDE.Size > 0 {
			spans = append(spans, span{s.FDE.Start, s.FDE.Start + s.FDE.Size})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	g := &gapChecker{f: f, arch: t.Arch, starts: make([]uint64, len(spans)), ends: make([]uint64, len(spans))}
	var end uint64
	for j, s := range spans {
		end = max(end, s.hi)
		g.starts[j], g.ends[j] = s.lo, end
	}
	return g
}

// padding reports whether [lo, hi) is padding: fewer than maxMergeGap
// bytes of one executable section, no part of a function the CFI
// describes, and all no-op instructions of the architecture or zeros.
func (g *gapChecker) padding(lo, hi uint64) bool {
	if hi-lo >= maxMergeGap {
		return false
	}
	// No function that starts before hi ends after lo.
	if k, _ := slices.BinarySearch(g.starts, hi); k > 0 && g.ends[k-1] > lo {
		return false
	}
	var b [maxMergeGap]byte
	buf := b[:hi-lo]
	if !g.read(lo, buf) {
		return false
	}
	return isPadding(g.arch, buf)
}

// read reads the bytes at address addr of an executable section of f.
func (g *gapChecker) read(addr uint64, buf []byte) bool {
	for _, s := range g.f.Sections {
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS || addr < s.Addr || addr+uint64(len(buf)) > s.Addr+s.Size {
			continue
		}
		_, err := s.ReadAt(buf, int64(addr-s.Addr))
		return err == nil
	}
	return false
}

// isPadding reports whether b is all zeros or a sequence of no-op
// instructions of arch (what assemblers and linkers fill alignment with).
func isPadding(arch Arch, b []byte) bool {
	zero := true
	for _, c := range b {
		if c != 0 {
			zero = false
			break
		}
	}
	if zero {
		return true
	}
	switch arch {
	case AMD64:
		return x86Nops(b)
	case AArch64:
		if len(b)%4 != 0 {
			return false
		}
		for p := 0; p < len(b); p += 4 {
			if w := binary.LittleEndian.Uint32(b[p:]); w != 0xd503201f && w != 0 { // nop, or a zero word
				return false
			}
		}
		return true
	case S390X:
		for p := 0; p < len(b); {
			switch {
			case p+2 <= len(b) && b[p] == 0x07 && b[p+1] == 0x07: // nopr %r7 (bcr 0,%r7)
				p += 2
			case p+4 <= len(b) && binary.BigEndian.Uint32(b[p:]) == 0x47000000: // nop (bc 0,0)
				p += 4
			default:
				return false
			}
		}
		return true
	}
	return false
}

// x86Nops reports whether b is a sequence of x86-64 no-op instructions:
// nop (0x90) and the multi-byte nopl/nopw (0x0f 0x1f /0 with any
// addressing form), each after any number of 0x66 and 0x2e prefixes, or
// int3 (0xcc, the padding of some linkers).
func x86Nops(b []byte) bool {
	for p := 0; p < len(b); {
		if b[p] == 0xcc {
			p++
			continue
		}
		for p < len(b) && (b[p] == 0x66 || b[p] == 0x2e) {
			p++
		}
		switch {
		case p < len(b) && b[p] == 0x90:
			p++
		case p+2 < len(b) && b[p] == 0x0f && b[p+1] == 0x1f:
			modrm := b[p+2]
			p += 3
			if modrm>>3&7 != 0 {
				return false
			}
			mod, rm := modrm>>6, modrm&7
			if mod == 3 {
				continue
			}
			if rm == 4 { // SIB
				if p >= len(b) {
					return false
				}
				if mod == 0 && b[p]&7 == 5 {
					p += 4 // disp32, no base
				}
				p++
			} else if mod == 0 && rm == 5 {
				p += 4 // RIP-relative disp32
			}
			switch mod {
			case 1:
				p++
			case 2:
				p += 4
			}
			if p > len(b) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
