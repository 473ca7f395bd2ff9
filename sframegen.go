// Package sframegen generates SFrame stack-trace sections from the DWARF
// call-frame information of ELF files, in one call: the library form of the
// sframe-gen command.
//
// Start from [GenerateFile] to get a file's section (its bytes, the address
// they assume, the functions left out and why), or [WriteFile] to write the
// file with it, atomically, as the command does. [Options] choose the
// SFrame version, GNU compatibility, shared FRE blocks and strictness.
// Underneath, the packages do one step each: cfi reads the CFI, lower
// translates it per ABI, emit is the SFrame format (and emit.Reader, for
// stack walkers, looks PCs up in a section), elfpatch writes the ELF file.
//
//	sec, err := sframegen.GenerateFile("libfoo.so", sframegen.Options{})
//	if err != nil { ... }
//	fmt.Printf("%d bytes at %#x, %d functions left out\n", len(sec.Data), sec.Addr, len(sec.Skipped()))
package sframegen

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/lower"
)

// Options choose what is generated. The zero value is the command's
// default: SFrame version 3 that means what the CFI means at every address.
type Options struct {
	// Version is the SFrame version to write: 3 (also for 0) or 2, for the
	// readers of binutils 2.41-2.45.
	Version int
	// V2Layout, with Version 2, is the binutils layout written:
	// lower.V2PCRel (2.45's, the default) or lower.V2Binutils244.
	V2Layout lower.V2Layout
	// GasCompat reproduces GNU as --gsframe and ld byte for byte, including
	// where their translation does not mean what the CFI means.
	GasCompat bool
	// Share says whether functions whose FRE data is the same share one
	// block of it (a smaller section, docs/sharing.md). The default
	// shares, but for GasCompat (GNU never shares) and big-endian files.
	Share Sharing
	// Strict makes any function that cannot be represented, and any broken
	// CFI entry, an error (*StrictError).
	Strict bool
	// Source is the CFI section read: .eh_frame when present (cfi.Auto), or
	// the one named.
	Source cfi.Source
	// Arch, when not empty, is the architecture the file must be for
	// (x86_64/amd64, aarch64/arm64, aarch64_be, s390x).
	Arch string
	// Tune, when not nil, adjusts the lower.Options just before lowering:
	// the command uses it for its own scheduling (lower.Options.Hold while
	// it copies the file, HugePages for a short-lived run).
	Tune func(*lower.Options)
}

// Section is a generated SFrame section.
type Section struct {
	// Data is the section's bytes.
	Data []byte
	// Addr is the address Data assumes: where WriteFile puts the section
	// in a linked file (its function start fields are PC-relative). 0 for
	// a relocatable object, whose start fields Relocs fill at link time.
	Addr uint64
	// Relocs are, for a relocatable object, the .rela.sframe entries.
	Relocs []elfpatch.Reloc
	// Target is the file's ABI.
	Target lower.Target
	// Result is the lowered section: its functions, and in Result.Skipped
	// those left out (or kept without FREs) with the reason.
	Result *lower.Result
	// EntryErrors are the CFI entries that could not be read.
	EntryErrors []*cfi.EntryError
	// Shared says whether functions with the same FRE data share one
	// block of it; when they do not, Unshared says why (Options.Share).
	Shared   bool
	Unshared string
}

// Skipped returns the functions left without an SFrame FDE, with the
// reason (not the signal frames kept without FREs).
func (s *Section) Skipped() []lower.Skip {
	var out []lower.Skip
	for _, k := range s.Result.Skipped {
		if !k.Emitted {
			out = append(out, k)
		}
	}
	return out
}

// ErrNoCFI is returned for a file without call-frame information: nothing
// to generate from.
var ErrNoCFI = errors.New("no call-frame information")

// ErrNoFunctions is returned when no function of the file has an SFrame
// representation: there is no section to write (Section.Skipped says why
// for each).
var ErrNoFunctions = errors.New("no function has an SFrame representation")

// ErrShareBigEndian is the error of ShareAlways for a big-endian file.
var ErrShareBigEndian = errors.New("the file is big-endian")

// Sharing says whether functions with the same FRE data share one block
// of it ([Options].Share).
type Sharing int

const (
	// ShareDefault shares, except with GasCompat (GNU as and ld never
	// share, and their bytes are asked for) and in a big-endian file
	// (GNU libsframe on a little-endian host, as cross ld and objdump
	// run, cannot read shared blocks there).
	ShareDefault Sharing = iota
	// ShareAlways shares; a big-endian file is an error
	// (ErrShareBigEndian), and so is GasCompat.
	ShareAlways
	// ShareNever writes one block per function.
	ShareNever
)

// SharingFor says whether a section generated with opt for target shares
// its FRE blocks and, when it does not, why (for reports); an error for
// ShareAlways where sharing is refused.
func SharingFor(target lower.Target, opt Options) (share bool, why string, err error) {
	switch {
	case opt.Share == ShareNever:
		return false, "asked for one block per function", nil
	case opt.Share == ShareAlways && opt.GasCompat:
		return false, "", errors.New("GasCompat reproduces GNU's bytes, and GNU never shares FRE blocks")
	case opt.Share == ShareAlways && target.BigEndian:
		return false, "", fmt.Errorf("%w (%s), and GNU libsframe on a little-endian host (cross ld, objdump) cannot read FRE data shared in a big-endian section; generate it without sharing", ErrShareBigEndian, target)
	case opt.GasCompat:
		return false, "GNU's bytes asked for (GNU never shares)", nil
	case target.BigEndian:
		return false, "big-endian file (GNU libsframe on a little-endian host cannot read shared blocks in it)", nil
	}
	return true, "", nil
}

// StrictError is returned with Options.Strict when functions or CFI
// entries could not be represented.
type StrictError struct {
	Skipped     []lower.Skip
	EntryErrors []*cfi.EntryError
}

// Error says how many functions and entries were left out, and names the
// first of them.
func (e *StrictError) Error() string {
	msg := fmt.Sprintf("%d functions and %d CFI entries could not be represented", len(e.Skipped), len(e.EntryErrors))
	switch {
	case len(e.Skipped) > 0:
		msg += "; the first: " + e.Skipped[0].Error()
	case len(e.EntryErrors) > 0:
		msg += "; the first: " + e.EntryErrors[0].Error()
	}
	return msg
}

// parallelCFIBytes is the size of a CFI section from which lowering runs
// on every CPU (about 4096 FDEs): below it, starting goroutines costs
// about what they save. The bytes are the same either way.
const parallelCFIBytes = 192 << 10

// Lower reads and lowers the CFI of the ELF file f, whose bytes r holds
// (size bytes): the section before it is placed and encoded (Data is nil).
// A linked file's CFI is lowered as it is read (lower.LowerScan, on every
// CPU for a big section, read where the file is mapped when r is an
// *os.File); an object's, or any file's for version 2, is read whole
// first (lower.LowerFile). It returns ErrNoCFI when nothing describes any
// code. Options.Strict is not applied: the caller sees what was left out
// in Section.Skipped and Section.EntryErrors.
func Lower(r io.ReaderAt, size int64, f *elf.File, opt Options) (*Section, error) {
	target, err := targetOf(f, opt.Arch)
	if err != nil {
		return nil, err
	}
	lo, err := LowerOptions(target, opt)
	if err != nil {
		return nil, err
	}
	var res *lower.Result
	var errs []*cfi.EntryError
	if target.Relocatable || lo.Version == 2 {
		res, errs, err = lowerRead(f, target, lo, opt)
	} else {
		res, errs, err = lowerScan(r, size, f, target, lo, opt)
	}
	if err != nil {
		return nil, err
	}
	sec := &Section{Target: target, Result: res, EntryErrors: errs}
	sec.Shared, sec.Unshared, _ = SharingFor(target, opt)
	for _, r := range res.Relocs {
		sec.Relocs = append(sec.Relocs, elfpatch.Reloc{Offset: r.Offset, Type: r.Type, Section: uint32(r.Section), Addend: r.Addend})
	}
	return sec, nil
}

// targetOf returns f's ABI, which must be arch's when arch is not empty.
func targetOf(f *elf.File, arch string) (lower.Target, error) {
	target, err := lower.TargetForELF(f)
	if err != nil || arch == "" {
		return target, err
	}
	want, err := lower.TargetByName(arch)
	if err != nil {
		return target, err
	}
	if want.Arch != target.Arch || want.BigEndian != target.BigEndian {
		return target, fmt.Errorf("file is for %s, not %s", target, want)
	}
	return target, nil
}

// lowerRead is Lower's general path: the CFI section read whole, then
// lowered (lower.LowerFile).
func lowerRead(f *elf.File, target lower.Target, lo lower.Options, opt Options) (*lower.Result, []*cfi.EntryError, error) {
	frames, err := cfi.Read(f, opt.Source)
	if errors.Is(err, cfi.ErrNoCFI) || err == nil && len(frames.FDEs) == 0 && len(frames.Errors) == 0 {
		return nil, nil, ErrNoCFI
	}
	if err != nil {
		return nil, nil, err
	}
	if lo.Version == 2 && len(frames.Data) >= parallelCFIBytes {
		lo.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Tune != nil {
		opt.Tune(&lo)
	}
	res, _, err := lower.LowerFile(f, frames, target, lo)
	if err != nil {
		return nil, nil, err
	}
	return res, frames.Errors, nil
}

// lowerScan is Lower's fast path for a linked file: its CFI lowered as it
// is read (lower.LowerScan).
func lowerScan(r io.ReaderAt, size int64, f *elf.File, target lower.Target, lo lower.Options, opt Options) (*lower.Result, []*cfi.EntryError, error) {
	// The section is read where the file is mapped, not copied
	// (libLLVM.so: --raw 8 ms slower read into memory, 37 -> 45 ms
	// median, 21 alternated runs); LowerScan turns a fault (the file cut
	// meanwhile) into an error and keeps no reference into the mapping.
	var frames *cfi.Frames
	var err error
	if mapped, unmap := mapFile(r, size); mapped != nil {
		defer unmap()
		frames, err = cfi.OpenMapped(f, opt.Source, mapped)
		lo.MappedCFI = true
	} else {
		frames, err = cfi.Open(f, opt.Source)
	}
	if errors.Is(err, cfi.ErrNoCFI) {
		return nil, nil, ErrNoCFI
	}
	if err != nil {
		return nil, nil, err
	}
	if len(frames.Data) >= parallelCFIBytes {
		lo.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Tune != nil {
		opt.Tune(&lo)
	}
	res, _, errs, err := lower.LowerScan(f, frames, target, lo)
	if err != nil {
		// As when the section is read first: without FDEs and broken
		// entries there is nothing to lower, whatever else is wrong.
		if all, rerr := cfi.Read(f, opt.Source); rerr == nil && len(all.FDEs) == 0 && len(all.Errors) == 0 {
			return nil, nil, ErrNoCFI
		}
		return nil, nil, err
	}
	if res.FDEsRead == 0 && len(errs) == 0 {
		return nil, nil, ErrNoCFI
	}
	return res, errs, nil
}

// LowerOptions returns the lower.Options that generate with opt for
// target: the version, and FRE blocks shared as [SharingFor] decides.
func LowerOptions(target lower.Target, opt Options) (lower.Options, error) {
	share, _, err := SharingFor(target, opt)
	if err != nil {
		return lower.Options{}, err
	}
	lo := lower.Options{GasCompat: opt.GasCompat, ShareFREs: share}
	switch opt.Version {
	case 0, 3:
	case 2:
		lo.Version, lo.V2Layout = 2, opt.V2Layout
	default:
		return lower.Options{}, fmt.Errorf("SFrame version %d: 2 or 3", opt.Version)
	}
	return lo, nil
}

// Generate makes the SFrame section of the ELF file r (of size bytes), as
// WriteFile would write it: for a linked file, at the address the patch
// would put it.
func Generate(r io.ReaderAt, size int64, opt Options) (*Section, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	sec, err := lowered(r, size, f, opt)
	if err != nil {
		return nil, err
	}
	if sec.Target.Relocatable {
		sec.Data, err = sec.Result.Section.Encode()
		return sec, err
	}
	n, err := sec.Result.Section.Size()
	if err != nil {
		return nil, err
	}
	layout, err := elfpatch.PlaceLinked(r, size, n)
	if err != nil {
		return nil, err
	}
	sec.Addr = layout.Addr
	sec.Data, err = encodeAt(sec.Result, layout.Addr)
	return sec, err
}

// GenerateFile is Generate on the file at path.
func GenerateFile(path string, opt Options) (*Section, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return Generate(f, st.Size(), opt)
}

// WriteFile writes the file at in, with its SFrame section, to out (which
// may be in): .sframe and .rela.sframe in a relocatable object, a loaded
// .sframe with PT_GNU_SFRAME in a linked file. The file is replaced
// atomically: on any error out is as before and no temporary file is left.
func WriteFile(in, out string, opt Options) (*Section, error) {
	file, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, err
	}
	f, err := elf.NewFile(file)
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	sec, err := lowered(file, st.Size(), f, opt)
	file.Close()
	if err != nil {
		return nil, err
	}
	if sec.Target.Relocatable {
		if sec.Data, err = sec.Result.Section.Encode(); err != nil {
			return nil, err
		}
		return sec, elfpatch.PatchObjectFile(in, out, sec.Data, sec.Relocs)
	}
	n, err := sec.Result.Section.Size()
	if err != nil {
		return nil, err
	}
	layout, err := elfpatch.PatchLinkedFile(in, out, n, func(addr uint64) ([]byte, error) {
		data, err := encodeAt(sec.Result, addr)
		sec.Data = data
		return data, err
	})
	sec.Addr = layout.Addr
	return sec, err
}

// lowered is Lower, with Options.Strict applied and a section without
// any function refused.
func lowered(r io.ReaderAt, size int64, f *elf.File, opt Options) (*Section, error) {
	sec, err := Lower(r, size, f, opt)
	if err != nil {
		return nil, err
	}
	if opt.Strict {
		if sk := sec.Skipped(); len(sk) > 0 || len(sec.EntryErrors) > 0 {
			return nil, &StrictError{Skipped: sk, EntryErrors: sec.EntryErrors}
		}
	}
	if sec.Result.Section.NumFDEs() == 0 {
		return nil, ErrNoFunctions
	}
	return sec, nil
}

// encodeAt places a linked file's section at addr and encodes it
// (lower.Result.PlaceAndEncode: the FDE index sorted by start, the start
// fields set), in one buffer, so that Result.Section is what the bytes
// hold: read in memory (emit.Dump, emit.ReaderFor) it answers as the bytes
// decoded do.
func encodeAt(res *lower.Result, addr uint64) ([]byte, error) {
	parts, err := res.PlaceAndEncode(addr)
	if err != nil {
		return nil, fmt.Errorf("encoding .sframe: %w", err)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	var data []byte
	for _, p := range parts {
		data = append(data, p...)
	}
	return data, nil
}
