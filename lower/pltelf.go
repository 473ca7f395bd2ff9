package lower

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// endbr64 is the x86-64 IBT landing pad that starts every IBT PLT entry.
var endbr64 = [4]byte{0xf3, 0x0f, 0x1e, 0xfa}

// pltForELF finds the PLT sections of a linked file for which GNU ld makes
// SFrame FDEs, and the x86-64 layout ld used for them, so PLT can rebuild
// ld's FDEs. AArch64 (ld makes none: aarch64PLT reads its stubs) and
// relocatable objects give no sections.
//
// The layout is read from the code, as ld chose it: a .plt.sec section or an
// IBT landing pad at the start of .plt.got means IBT; a .plt beginning with
// PLT0's "pushq GOT+8(%rip)" (ff 35) means lazy binding.
func pltForELF(f *elf.File, t Target) (PLTVariant, []PLTSection, error) {
	if t.Relocatable || t.Arch == AArch64 {
		return PLTLazy, nil, nil
	}
	var secs []PLTSection
	add := func(kind PLTKind) *elf.Section {
		s := f.Section(kind.String())
		if s == nil || s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 {
			return nil
		}
		secs = append(secs, PLTSection{Kind: kind, Addr: s.Addr, Size: s.Size})
		return s
	}
	plt := add(PLTMain)
	if t.Arch == S390X {
		return PLTLazy, secs, nil
	}
	sec := add(PLTSec)
	got := add(PLTGot)

	ibt := sec != nil
	if !ibt && got != nil {
		head, err := sectionHead(got, 4)
		if err != nil {
			return 0, nil, err
		}
		ibt = [4]byte(head) == endbr64
	}
	lazy := true
	if plt != nil {
		head, err := sectionHead(plt, 2)
		if err != nil {
			return 0, nil, err
		}
		lazy = head[0] == 0xff && head[1] == 0x35
	}
	switch {
	case lazy && ibt:
		return PLTLazyIBT, secs, nil
	case lazy:
		return PLTLazy, secs, nil
	case ibt:
		return PLTNonLazyIBT, secs, nil
	}
	return PLTNonLazy, secs, nil
}

// sectionHead reads the first n bytes of s.
func sectionHead(s *elf.Section, n int) ([]byte, error) {
	if s.Flags&elf.SHF_COMPRESSED != 0 { // debug/elf gives no ReaderAt
		return nil, fmt.Errorf("section %s is compressed (SHF_COMPRESSED): it cannot be code", s.Name)
	}
	if s.Size < uint64(n) {
		return make([]byte, n), nil
	}
	buf := make([]byte, n)
	if _, err := s.ReadAt(buf, 0); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("section %s (file offset %#x, size %#x) runs past the end of the file", s.Name, s.Offset, s.Size)
		}
		return nil, fmt.Errorf("reading %s: %w", s.Name, err)
	}
	return buf, nil
}

// LowerFile is Lower for a whole ELF file as GNU ld would lay its SFrame
// out: for a linked file, the FDEs that .eh_frame has for the PLT sections
// ld describes are replaced by ld's fixed PLT FDEs, added after the
// functions (pltWith: in the correct mode with .plt.got's true CFA); on
// AArch64, in the correct mode, the .plt stubs get FDEs read from their
// code (aarch64PLT). It returns the PLT sections so callers can tell those
// FDEs apart in reports.
func LowerFile(f *elf.File, frames *cfi.Frames, t Target, opt Options) (*Result, []PLTSection, error) {
	pltFDEs, plt, err := filePLT(f, t, opt)
	if err != nil {
		return nil, nil, err
	}
	// ld's PLT CFI is replaced by its fixed PLT FDEs; CFI for addresses no
	// executable segment maps (a damaged or odd file) would make the kernel
	// reject the whole section, so those functions are skipped.
	var outside []Skip
	all := len(frames.FDEs)
	kept := make([]*cfi.FDE, 0, len(frames.FDEs))
	keep := fileFilter(f, t, plt).keep
	for _, fde := range frames.FDEs {
		switch reason, ok := keep(fde); {
		case reason != "":
			outside = append(outside, Skip{FDE: fde, Reason: reason})
		case ok:
			kept = append(kept, fde)
		}
	}
	if len(kept) < len(frames.FDEs) {
		only := *frames
		only.FDEs = kept
		frames = &only
	}
	inner := opt
	if !t.Relocatable {
		inner.ShareFREs = false // once the PLT FDEs are appended
	}
	res, err := Lower(frames, t, inner)
	if err != nil {
		return nil, nil, err
	}
	res.FDEsRead = all
	if len(outside) > 0 {
		res.Skipped = append(res.Skipped, outside...)
		sort.SliceStable(res.Skipped, func(i, j int) bool { return res.Skipped[i].FDE.Offset < res.Skipped[j].FDE.Offset })
	}
	return finishFile(res, f, t, pltFDEs, plt, opt)
}

// filePLT returns the PLT FDEs of a linked file and its PLT sections: ld's
// (pltForELF, pltWith) on x86-64 and s390x; on AArch64, where ld writes
// none, those of the stubs aarch64PLT recognizes, unless opt.GasCompat.
func filePLT(f *elf.File, t Target, opt Options) ([]PLTFDE, []PLTSection, error) {
	if t.Arch == AArch64 {
		if t.Relocatable || opt.GasCompat {
			return nil, nil, nil
		}
		return aarch64PLT(f)
	}
	variant, plt, err := pltForELF(f, t)
	if err != nil || len(plt) == 0 {
		return nil, nil, err
	}
	fdes, err := pltWith(t, variant, plt, opt)
	if err != nil {
		return nil, nil, err
	}
	return fdes, plt, nil
}

// finishFile merges the FDEs of a file's result (Options.MergeFDEs) and
// appends its PLT FDEs.
func finishFile(res *Result, f *elf.File, t Target, fdes []PLTFDE, plt []PLTSection, opt Options) (*Result, []PLTSection, error) {
	if err := mergeFDERuns(res, f, t, opt); err != nil {
		return nil, nil, err
	}
	if len(fdes) > 0 {
		if err := res.appendPLT(fdes); err != nil {
			return nil, nil, err
		}
	}
	if !t.Relocatable {
		// (An object's were shared before its padding.)
		if err := res.share(opt); err != nil {
			return nil, nil, err
		}
	}
	return res, plt, nil
}

// fdeFilter says what LowerFile does with each CFI FDE of a file before
// lowering (keep).
type fdeFilter struct {
	f              *elf.File
	relocatable    bool
	code           []addrRange  // a linked file's executable segments
	plt            []PLTSection // and PLT sections,
	pltLo, pltLast uint64       // from pltLo to pltLast (none: lo > last)
}

// fileFilter returns the fdeFilter of f.
func fileFilter(f *elf.File, t Target, plt []PLTSection) *fdeFilter {
	ff := &fdeFilter{f: f, relocatable: t.Relocatable, plt: plt, pltLo: math.MaxUint64}
	if !t.Relocatable {
		ff.code = executableRanges(f)
	}
	for _, s := range plt {
		if s.Size == 0 {
			continue
		}
		last := s.Addr + s.Size - 1
		if last < s.Addr {
			last = math.MaxUint64 // inPLTSections' sections end at 2^64
		}
		ff.pltLo, ff.pltLast = min(ff.pltLo, s.Addr), max(ff.pltLast, last)
	}
	return ff
}

// keep returns a reason to skip fde (code outside every executable
// segment, or in an object outside its section), or whether to lower it
// (false for the PLT's, replaced by ld's PLT FDEs). A linked file's FDE
// outside the span of the PLT sections is not looked for in each.
func (ff *fdeFilter) keep(fde *cfi.FDE) (reason string, lower bool) {
	if ff.relocatable {
		if reason := outsideSection(ff.f, fde); reason != "" {
			return reason, false
		}
		return "", true
	}
	switch start := fde.Start; {
	case start >= ff.pltLo && start <= ff.pltLast && inPLTSections(ff.plt, start):
		return "", false
	case !inRanges(ff.code, start, fde.Size):
		return fmt.Sprintf("code at %#x-%#x is outside every executable segment", start, start+fde.Size), false
	}
	return "", true
}

// inPLTSections reports whether addr lies in one of the PLT sections.
func inPLTSections(plt []PLTSection, addr uint64) bool {
	for _, s := range plt {
		if addr >= s.Addr && addr-s.Addr < s.Size {
			return true
		}
	}
	return false
}

// addrRange is a half-open address range [lo, hi).
type addrRange struct{ lo, hi uint64 }

// executableRanges returns the address ranges of f's executable PT_LOADs.
func executableRanges(f *elf.File) []addrRange {
	var out []addrRange
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr+p.Memsz >= p.Vaddr {
			out = append(out, addrRange{p.Vaddr, p.Vaddr + p.Memsz})
		}
	}
	return out
}

// inRanges reports whether [start, start+size) lies inside one of rs.
func inRanges(rs []addrRange, start, size uint64) bool {
	for _, r := range rs {
		if start >= r.lo && start <= r.hi && size <= r.hi-start {
			return true
		}
	}
	return false
}

// outsideSection says why the code an FDE of a relocatable object
// describes is not inside its section, or returns "".
func outsideSection(f *elf.File, fde *cfi.FDE) string {
	if fde.Section == 0 {
		return "code in no section (the FDE's start is not relocated against one)"
	}
	if fde.Section < 0 || fde.Section >= len(f.Sections) {
		return fmt.Sprintf("code in section %d, which does not exist", fde.Section)
	}
	s := f.Sections[fde.Section]
	if s.Type == elf.SHT_NOBITS || !inRanges([]addrRange{{0, s.Size}}, fde.Start, fde.Size) {
		return fmt.Sprintf("code at %s+%#x-%#x is outside its section (size %#x)", s.Name, fde.Start, fde.Start+fde.Size, s.Size)
	}
	return ""
}
