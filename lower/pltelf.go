package lower

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// endbr64 is the x86-64 IBT landing pad that starts every IBT PLT entry.
var endbr64 = [4]byte{0xf3, 0x0f, 0x1e, 0xfa}

// PLTForELF finds the PLT sections of a linked file for which GNU ld makes
// SFrame FDEs, and the x86-64 layout ld used for them, so PLT can rebuild
// ld's FDEs. AArch64 (ld makes none) and relocatable objects give no
// sections.
//
// The layout is read from the code, as ld chose it: a .plt.sec section or an
// IBT landing pad at the start of .plt.got means IBT; a .plt beginning with
// PLT0's "pushq GOT+8(%rip)" (ff 35) means lazy binding.
func PLTForELF(f *elf.File, t Target) (PLTVariant, []PLTSection, error) {
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
// functions (PLTWith: in the correct mode with .plt.got's true CFA). It
// returns the PLT sections so callers can tell those FDEs apart in reports.
func LowerFile(f *elf.File, frames *cfi.Frames, t Target, opt Options) (*Result, []PLTSection, error) {
	variant, plt, err := PLTForELF(f, t)
	if err != nil {
		return nil, nil, err
	}
	// ld's PLT CFI is replaced by its fixed PLT FDEs; CFI for addresses no
	// executable segment maps (a damaged or odd file) would make the kernel
	// reject the whole section, so those functions are skipped.
	var outside []Skip
	all := len(frames.FDEs)
	kept := make([]*cfi.FDE, 0, len(frames.FDEs))
	keep := fileFilter(f, t, plt)
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
	res, err := LowerWith(frames, t, opt)
	if err != nil {
		return nil, nil, err
	}
	res.FDEsRead = all
	if len(outside) > 0 {
		res.Skipped = append(res.Skipped, outside...)
		sort.SliceStable(res.Skipped, func(i, j int) bool { return res.Skipped[i].FDE.Offset < res.Skipped[j].FDE.Offset })
	}
	return finishFile(res, t, variant, plt, opt)
}

// finishFile appends the PLT FDEs of a file to its result.
func finishFile(res *Result, t Target, variant PLTVariant, plt []PLTSection, opt Options) (*Result, []PLTSection, error) {
	if len(plt) > 0 {
		fdes, err := PLTWith(t, variant, plt, opt)
		if err != nil {
			return nil, nil, err
		}
		if err := res.AppendPLT(fdes); err != nil {
			return nil, nil, err
		}
	}
	return res, plt, nil
}

// fileFilter returns what LowerFile does with each CFI FDE of f before
// lowering: a reason to skip it (code outside every executable segment,
// or in an object outside its section), or whether to lower it (false for
// the PLT's, replaced by ld's PLT FDEs).
func fileFilter(f *elf.File, t Target, plt []PLTSection) func(fde *cfi.FDE) (reason string, lower bool) {
	if t.Relocatable {
		return func(fde *cfi.FDE) (string, bool) {
			if reason := outsideSection(f, fde); reason != "" {
				return reason, false
			}
			return "", true
		}
	}
	code := executableRanges(f)
	return func(fde *cfi.FDE) (string, bool) {
		switch {
		case InPLT(plt, fde.Start):
			return "", false
		case !inRanges(code, fde.Start, fde.Size):
			return fmt.Sprintf("code at %#x-%#x is outside every executable segment", fde.Start, fde.Start+fde.Size), false
		}
		return "", true
	}
}

// LowerScan is LowerFile for a section opened with cfi.Open (its entries
// not read): it reads the FDEs with cfi.Scanners (on opt.Workers
// goroutines, a part of the section each) and lowers each as it is read,
// so that the CFI FDEs are never all held at once. The result is
// LowerFile's for cfi.Read's Frames, but with no Sources (each FDE is
// gone once lowered; a Skip holds a copy of its FDE); the errors of the
// section's entries (Read's Frames.Errors) are returned beside it, and
// Result.FDEsRead counts the FDEs read.
func LowerScan(f *elf.File, frames *cfi.Frames, t Target, opt Options) (res *Result, plt []PLTSection, errs []*cfi.EntryError, err error) {
	if opt.MappedCFI {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				res, plt, errs, err = nil, nil, nil, faultError(r)
			}
		}()
	}
	if frames == nil {
		return nil, nil, nil, fmt.Errorf("lower: no CFI")
	}
	if len(frames.FDEs) != 0 || len(frames.Errors) != 0 {
		return nil, nil, nil, fmt.Errorf("lower: LowerScan needs a CFI section opened with cfi.Open, not read")
	}
	if frames.Relocatable != t.Relocatable {
		return nil, nil, nil, fmt.Errorf("lower: CFI of a relocatable object is %v, target says %v", frames.Relocatable, t.Relocatable)
	}
	if err := t.check(); err != nil {
		return nil, nil, nil, err
	}
	variant, plt, err := PLTForELF(f, t)
	if err != nil {
		return nil, nil, nil, err
	}
	keep := fileFilter(f, t, plt)
	nparts := 1
	if opt.Workers > 1 {
		nparts = opt.Workers * partsPerWorker
	}
	cuts, counts := frames.Cut(nparts)
	if opt.afterCut != nil {
		opt.afterCut()
	}
	n := 8 // the PLT FDEs
	for _, c := range counts {
		n += c
	}
	// The packed FRE data of a part: about 1.25 bytes per byte of CFI
	// instructions (packedSize), of which the part has fewer than its
	// size, and the attribute records.
	packedOf := func(k int) int {
		return emit.FDEAttrSize*counts[k] + (cuts[k+1]-cuts[k])*5/4
	}
	scan := func(p *Result, k int) (read int, errs []*cfi.EntryError, err error) {
		if opt.MappedCFI {
			// On a worker's goroutine too.
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer func() {
				if r := recover(); r != nil {
					read, errs, err = 0, nil, faultError(r)
				}
			}()
		}
		s := frames.Scanner(cuts[k], cuts[k+1])
		r, err := newRangeLowerer(p, frames, counts[k], t, opt, true)
		if err != nil {
			return 0, nil, err
		}
		var fde cfi.FDE
		for s.Next(&fde) {
			read++
			switch reason, ok := keep(&fde); {
			case reason != "":
				r.skip(Skip{FDE: &fde, Reason: reason})
			case ok:
				if err := r.lower(&fde); err != nil {
					return 0, nil, err
				}
			}
		}
		return read, s.Errors(), nil
	}
	read := 0
	if len(counts) > 1 {
		packed := 1024 // and the PLT FDEs
		for k := range counts {
			packed += packedOf(k)
		}
		res = newResult(t, opt, n, packed)
		res.Sources = nil
		parts := make([]part, len(counts))
		partErrs := make([][]*cfi.EntryError, len(counts))
		partRead := make([]int, len(counts))
		for k := range parts {
			parts[k] = part{fdes: counts[k], packed: packedOf(k), run: func(p *Result) (err error) {
				partRead[k], partErrs[k], err = scan(p, k)
				return err
			}}
		}
		if lowerParallel(res, t, parts, opt.Workers) {
			for k := range parts {
				read += partRead[k]
				errs = append(errs, partErrs[k]...)
			}
		} else {
			res = nil // some function failed: lower again in one piece, for the serial error
		}
	}
	if res == nil {
		cuts, counts = []int{0, len(frames.Data)}, []int{n - 8}
		res = newResult(t, opt, n, packedOf(0)+1024)
		res.Sources = nil
		if read, errs, err = scan(res, 0); err != nil {
			return nil, nil, nil, err
		}
	}
	res.FDEsRead = read
	padObject(res, t)
	res, plt, err = finishFile(res, t, variant, plt, opt)
	return res, plt, errs, err
}

// faultError returns the error of a recovered memory fault (the panic of
// a goroutine that SetPanicOnFault, which says where it faulted); any
// other panic goes on.
func faultError(r any) error {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		return fmt.Errorf("memory fault reading the CFI section at %#x (was the file cut while it was read?)", f.Addr())
	}
	panic(r)
}

// InPLT reports whether addr lies in one of the PLT sections.
func InPLT(plt []PLTSection, addr uint64) bool {
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
