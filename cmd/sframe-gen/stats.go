package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/pflag"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/verify"
)

// runStats implements "sframe-gen stats [--json] [--dry-run] FILE":
// coverage and cost of the .sframe section, or, for a file without one (or
// with --dry-run), of the section generating would write; for a static
// archive, of each member generate reads.
func (c *cli) runStats(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen stats", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	help := helpFlag(fs)
	asJSON := fs.Bool("json", false, "print the statistics as one JSON object")
	dry := fs.Bool("dry-run", false, "describe what generating would write even when FILE has a .sframe section")
	source := cfiSourceFlags(fs, "read")
	gas := fs.Bool("gas-compat", false, "in a dry run: what generating with --gas-compat writes")
	share := shareFlags(fs)
	merge := mergeFlag(fs)
	sframeVer := sframeVersionFlags(fs)
	jobs := fs.IntP("jobs", "j", 0, "with several PATHs or a directory: files read at once (default: the CPUs available)")
	budget := c.memoryLimitFlag(fs, readMemoryUsage)
	setUsage(fs, c.stdout, "sframe-gen stats [--json] [--dry-run] [GENERATE-OPTIONS] FILE\n"+
		"  or:  sframe-gen stats [--json] [--dry-run] [-j N] [GENERATE-OPTIONS] PATH...",
		"Coverage and cost of FILE's .sframe section (or, without one, of the section\n"+
			"generating would write with the same options: nothing is written); of a static\n"+
			"archive, of each member, named ARCHIVE(MEMBER).\n"+
			"With several PATHs or a directory (walked as generate walks it): a line per\n"+
			"file (--json: an object per file), then the total of all of them.")
	if err := fs.Parse(args); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if *help {
		fs.Usage()
		return exitOK
	}
	if fs.NArg() == 0 {
		return c.fail("", commandUsage("stats", "expected a FILE, or PATHs"))
	}
	var o generateOptions
	var err error
	o.gas = *gas
	if o.source, err = source(); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if o.version, err = sframeVer(); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if o.share, err = share(o.gas); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if o.merge, err = merge(o.gas); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	b, err := budget()
	if err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	opts := o.library()
	if _, err := sframegen.NewGenerator(opts, sframegen.Resources{}); err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	if fs.NArg() > 1 || isDir(fs.Arg(0)) {
		return c.runStatsTree(fs.Args(), opts, b, *dry, *asJSON, *jobs)
	}
	return c.statsFile(fs.Arg(0), opts, b, *dry, *asJSON)
}

// meteredGenerator is the generator of a dry run with options opts: it
// charges what it reads to meter, the input's, given back with the
// input's.
func meteredGenerator(opts sframegen.Options, meter *sframegen.Meter) *sframegen.Generator {
	admit := func(cost sframegen.Cost) (func(), error) { return func() {}, meter.Charge(cost) }
	g, _ := sframegen.NewGenerator(opts, sframegen.Resources{Admit: admit}) // opts checked by runStats
	return g
}

// statsFile prints the statistics of file and returns the exit status.
func (c *cli) statsFile(file string, opts sframegen.Options, b *memoryBudget, dry, asJSON bool) int {
	status := exitOK
	err := readInputs(file, "no member has a .sframe section or call-frame information", b, func(in elfInput) bool {
		g := meteredGenerator(opts, in.meter)
		if in.member && in.err == nil && verify.FindSection(in.f) == nil && !sframegen.Generates(in.f) {
			return false // generate leaves such a member as it is
		}
		err := in.err
		if err == nil {
			err = c.writeStats(in, g, dry, asJSON)
		}
		if err != nil {
			status = c.fail(in.name, err)
		}
		return true
	})
	if err != nil {
		return c.fail(file, err)
	}
	return status
}

// writeStats prints the statistics of in.
func (c *cli) writeStats(in elfInput, g *sframegen.Generator, dry, asJSON bool) error {
	st, err := computeStats(in, g, dry)
	if err != nil {
		return err
	}
	st.describe(in)
	w := bufio.NewWriter(c.stdout)
	if asJSON {
		enc := json.NewEncoder(jsonWriter{w})
		enc.SetIndent("", "  ")
		err = enc.Encode(st)
	} else {
		writeStatsText(w, st)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// statsJSON is the statistics of one file (docs/stats.md).
type statsJSON struct {
	File string `json:"file"`
	// Kind is the file's kind (sframegen.Kind: "executable",
	// "pie-executable", "shared-library", "object"), or "archive-member";
	// FileBytes its size (a member's, without its archive header).
	Kind      string `json:"kind"`
	FileBytes int64  `json:"file_bytes"`
	// DryRun is true when the figures describe the section generating
	// would write (FILE has no .sframe, or --dry-run).
	DryRun  bool   `json:"dry_run"`
	ABI     string `json:"abi"`
	Version uint8  `json:"version"`

	CFIFunctions       int    `json:"cfi_functions"`
	CFIBytes           uint64 `json:"cfi_bytes"`
	CoveredFunctions   int    `json:"covered_functions"`
	CoveredBytes       uint64 `json:"covered_bytes"`
	UncoveredFunctions int    `json:"uncovered_functions"`
	UncoveredBytes     uint64 `json:"uncovered_bytes"`
	// Skipped groups the functions left out by lower's reason (dry run
	// only: an existing section does not say why).
	Skipped []statsSkip `json:"skipped"`

	// V2Lost counts, in a dry run, the functions of the version 3
	// section that version 2 (--sframe-version 2) would leave out, by
	// reason in V2LostReasons.
	V2Lost        int         `json:"v2_lost_functions"`
	V2LostReasons []statsSkip `json:"v2_lost"`

	FDEs       int `json:"fdes"`
	PCMaskFDEs int `json:"pcmask_fdes"`
	FlexFDEs   int `json:"flex_fdes"`
	SignalFDEs int `json:"signal_fdes"`
	EmptyFDEs  int `json:"fdes_without_fres"`

	FREs int `json:"fres"`
	// FREsByAddrSize counts FREs by start-address width (1, 2, 4 bytes),
	// FREsByWordSize by data-word size (1, 2, 4 bytes), FREsByWordCount
	// by number of data words (0 to 6).
	FREsByAddrSize  [3]int `json:"fres_by_addr_size"`
	FREsByWordSize  [3]int `json:"fres_by_word_size"`
	FREsByWordCount [7]int `json:"fres_by_word_count"`
	MangledRA       int    `json:"fres_mangled_ra"`

	// SharedFDEs counts the FDEs that point at FRE data an FDE before
	// them (in the FRE sub-section's order) points at too (sections made
	// with --share-fres); RepeatedFDEs those whose FRE data is the same
	// bytes as an earlier FDE's, shared or not, and RepeatedBytes what
	// their copies take when each function has its own.
	// UnsharedBytes and SharedBytes are the section's size with one
	// block of FRE data per function and with every repeated block
	// shared (what --share-fres writes).
	// Shared says whether the section shares FRE blocks (a dry run: the
	// default command's choice, sframegen.SharingFor), and Unshared why
	// not, when known.
	Shared        bool   `json:"shared"`
	Unshared      string `json:"unshared_reason,omitempty"`
	SharedFDEs    int    `json:"shared_fdes"`
	RepeatedFDEs  int    `json:"repeated_fdes"`
	RepeatedBytes int    `json:"repeated_fre_bytes"`
	UnsharedBytes int    `json:"sframe_bytes_unshared"`
	SharedBytes   int    `json:"sframe_bytes_shared"`

	SectionBytes    int    `json:"sframe_bytes"`
	EHFrameBytes    uint64 `json:"eh_frame_bytes"`
	EHFrameHdrBytes uint64 `json:"eh_frame_hdr_bytes"`
	// Breakdown says where the section's bytes go; its parts add up to
	// SectionBytes.
	Breakdown statsBreakdown `json:"breakdown"`
}

// statsBreakdown splits a section's bytes by what they hold, as written
// (a block of FRE data shared by several FDEs is counted once).
type statsBreakdown struct {
	// Header is the header and the auxiliary header.
	Header int `json:"header"`
	// FDEIndex is the FDE index: 16 bytes per FDE in version 3, the
	// 20-byte FDEs (index and attributes together) in version 2.
	FDEIndex int `json:"fde_index"`
	// FDEAttributes is the 5-byte attribute records before each block of
	// FREs (version 3).
	FDEAttributes int `json:"fde_attributes"`
	// FREStartAddresses, FREInfo and DataWords are the FREs' start
	// addresses (1, 2 or 4 bytes each), their info bytes and their data
	// words.
	FREStartAddresses int `json:"fre_start_addresses"`
	FREInfo           int `json:"fre_info"`
	DataWords         int `json:"data_words"`
	// Other is what follows the FRE sub-section (s390x gas's padding).
	Other int `json:"other"`
	// SharingSaved and NarrowingSaved are not part of the section: what
	// its shared blocks of FRE data save over one block per function, and
	// what its FRE types narrower than GNU's save (lower's NarrowFREs);
	// together sframe_bytes_unshared - sframe_bytes.
	SharingSaved   int `json:"sharing_saved"`
	NarrowingSaved int `json:"narrowing_saved"`
}

func (b *statsBreakdown) add(o *statsBreakdown) {
	b.Header += o.Header
	b.FDEIndex += o.FDEIndex
	b.FDEAttributes += o.FDEAttributes
	b.FREStartAddresses += o.FREStartAddresses
	b.FREInfo += o.FREInfo
	b.DataWords += o.DataWords
	b.Other += o.Other
	b.SharingSaved += o.SharingSaved
	b.NarrowingSaved += o.NarrowingSaved
}

// sum is the section size the parts add up to (SharingSaved is not a
// part).
func (b *statsBreakdown) sum() int {
	return b.Header + b.FDEIndex + b.FDEAttributes + b.FREStartAddresses + b.FREInfo + b.DataWords + b.Other
}

// errNoSFrameNoCFI is computeStats' error for a file that has neither a
// .sframe section nor CFI.
var errNoSFrameNoCFI = errors.New("no .sframe section and no call-frame information")

type statsSkip struct {
	Reason    string `json:"reason"`
	Functions int    `json:"functions"`
	Bytes     uint64 `json:"bytes"`
}

// describe sets the fields that name st's file: its name, kind and size.
func (st *statsJSON) describe(in elfInput) {
	st.File = in.name
	st.Kind = sframegen.Kind(in.f)
	if in.member {
		st.Kind = "archive-member"
	}
	st.FileBytes = in.size
}

// computeStats gathers the statistics of in's section, or of a dry run:
// the section g generates, as --raw writes it (for a linked file, at
// address 0) with the same options.
func computeStats(in elfInput, g *sframegen.Generator, dry bool) (*statsJSON, error) {
	f, src := in.f, g.Options().Source
	st := &statsJSON{Skipped: []statsSkip{}, V2LostReasons: []statsSkip{}}
	if s := f.Section(".eh_frame"); s != nil {
		st.EHFrameBytes = s.Size
	}
	if s := f.Section(".eh_frame_hdr"); s != nil {
		st.EHFrameHdrBytes = s.Size
	}
	sec := verify.FindSection(f)
	if sec != nil && !dry {
		// Decoded here, and checked by verify.File against the CFI.
		if err := chargeVerify(in, src); err != nil {
			return nil, err
		}
		data, err := emit.SectionData(sec)
		if err != nil {
			return nil, err
		}
		s, err := emit.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", sec.Name, err)
		}
		st.SectionBytes = len(data)
		fdes, err := s.Functions()
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", sec.Name, err)
		}
		st.sectionStats(s, fdes, data)
		if err := st.sharingStats(s, fdes); err != nil {
			return nil, fmt.Errorf("section %s: %w", sec.Name, err)
		}
		st.Shared = st.SharedFDEs > 0
		rep, err := verify.File(f, verify.Options{Source: src})
		if errors.Is(err, verify.ErrNoCFI) {
			return st, nil // nothing describes the code: no coverage to measure
		}
		if err != nil {
			return nil, err
		}
		st.CFIFunctions, st.CFIBytes = rep.CFIFunctions, rep.CFIBytes
		st.UncoveredFunctions = len(rep.Uncovered)
		for _, u := range rep.Uncovered {
			st.UncoveredBytes += u.Size
		}
		st.CoveredFunctions = st.CFIFunctions - st.UncoveredFunctions
		st.CoveredBytes = st.CFIBytes - st.UncoveredBytes
		return st, nil
	}

	st.DryRun = true
	gen, err := g.GenerateAt(in.r, in.size, 0)
	switch {
	case errors.Is(err, sframegen.ErrNoCFI):
		return nil, errNoSFrameNoCFI
	case errors.Is(err, sframegen.ErrNoFunctions) && gen != nil:
		// Nothing is written: every function is left out.
	case err != nil:
		return nil, err
	}
	// The functions the CFI describes, one FDE at a time (a Scanner, as
	// the lowering reads them: none kept).
	frames, rerr := cfi.Open(f, src)
	if rerr != nil {
		return nil, rerr
	}
	var fde cfi.FDE
	for sc := frames.Scanner(0, len(frames.Data)); sc.Next(&fde); {
		if fde.Size > 0 {
			st.CFIFunctions++
			st.CFIBytes += fde.Size
		}
	}
	st.uncovered(gen.Omitted())
	st.CoveredFunctions = st.CFIFunctions - st.UncoveredFunctions
	st.CoveredBytes = st.CFIBytes - st.UncoveredBytes
	st.Shared, st.Unshared = gen.Shared, gen.Unshared
	if err != nil {
		h := gen.Result().Section.Header
		st.ABI, st.Version = h.ABI.String(), h.Version
		return st, nil
	}
	data := gen.Bytes()
	s, err := emit.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("encoding .sframe: %w", err)
	}
	st.SectionBytes = gen.Size()
	fdes, err := s.Functions()
	if err != nil {
		return nil, fmt.Errorf("encoding .sframe: %w", err)
	}
	st.sectionStats(s, fdes, data)
	if err := st.sharingStats(s, fdes); err != nil {
		return nil, fmt.Errorf("encoding .sframe: %w", err)
	}
	if s.Header.Version == emit.Version3 {
		st.v2Loss(gen, fdes)
	}
	return st, nil
}

// uncovered counts the functions left out (skipped), by reason.
func (st *statsJSON) uncovered(skipped []sframegen.Skip) {
	byReason := map[string]*statsSkip{}
	for _, s := range skipped {
		if s.Emitted || s.FDE.Size == 0 {
			continue
		}
		st.UncoveredFunctions++
		st.UncoveredBytes += s.FDE.Size
		k := byReason[s.Reason]
		if k == nil {
			k = &statsSkip{Reason: s.Reason}
			byReason[s.Reason] = k
		}
		k.Functions++
		k.Bytes += s.FDE.Size
	}
	st.Skipped = sortedSkips(byReason)
}

// sortedSkips lists the counts of byReason, the most functions first.
func sortedSkips(byReason map[string]*statsSkip) []statsSkip {
	list := []statsSkip{}
	for _, k := range byReason {
		list = append(list, *k)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Functions != b.Functions {
			return a.Functions > b.Functions
		}
		return a.Reason < b.Reason
	})
	return list
}

// sharingStats measures what sharing FRE data saves in s (emit's
// ShareFREs on copies of it) and how many of its FDEs share already; and
// what narrowing the FRE types saves (lower.Options.NarrowFREs): GNU's
// form (UnsharedBytes) has each FDE's FRE type as its size asks for.
func (st *statsJSON) sharingStats(s *emit.Section, fdes []emit.FDE) error {
	// Each function its own block, in the order of the FDEs: as written,
	// in GNU's form, and (version 3) narrowed as --share-fres writes.
	written := emit.Section{Header: s.Header, Trailer: s.Trailer}
	gnu := written
	narrow := written
	first := map[uint32]bool{}
	for i := range s.Index {
		off := s.Index[i].FREOffset
		if first[off] {
			st.SharedFDEs++
		}
		first[off] = true
		f := fdes[i]
		if err := written.AppendFDE(f); err != nil {
			return err
		}
		// Only the functions lowered from CFI are narrowed: PCINC, of
		// the type their size asks for (ld gives its PLT FDEs the type
		// of the whole PLT section, PLT0 included).
		sized := emit.FRETypeFor(f.Size)
		if f.PCType() == emit.PCInc && f.FREType() < sized {
			f.Info = withFREType(f.Info, sized)
		}
		if err := gnu.AppendFDE(f); err != nil {
			return err
		}
		if s.Header.Version == emit.Version3 && f.PCType() == emit.PCInc && f.FREType() == sized {
			var last uint32
			if len(f.FREs) > 0 {
				last = f.FREs[len(f.FREs)-1].StartAddr
			}
			f.Info = withFREType(f.Info, emit.NarrowestFREType(last))
		}
		if err := narrow.AppendFDE(f); err != nil {
			return err
		}
	}
	sizes := [3]int{}
	for k, sec := range []*emit.Section{&gnu, &written, &narrow} {
		n, err := sec.Size()
		if err != nil {
			return err
		}
		sizes[k] = n
	}
	st.UnsharedBytes = sizes[0]
	var err error
	if st.RepeatedFDEs, err = narrow.ShareFREs(); err != nil {
		return err
	}
	if st.SharedBytes, err = narrow.Size(); err != nil {
		return err
	}
	st.RepeatedBytes = sizes[2] - st.SharedBytes
	st.Breakdown.NarrowingSaved = sizes[0] - sizes[1]
	st.Breakdown.SharingSaved = sizes[1] - st.SectionBytes
	return nil
}

// withFREType is the FDE info byte info with FRE type t.
func withFREType(info uint8, t emit.FREType) uint8 { return info&^0xf | uint8(t) }

// sectionStats counts the FDEs and FREs of s, decoded from data into fdes.
func (st *statsJSON) sectionStats(s *emit.Section, fdes []emit.FDE, data []byte) {
	st.ABI, st.Version = s.Header.ABI.String(), s.Header.Version
	st.FDEs = s.NumFDEs()
	b := &st.Breakdown
	b.Header = emit.HeaderSize + len(s.Header.AuxHeader)
	b.Other = len(s.Trailer)
	if s.Header.Version == emit.Version2 {
		b.FDEIndex = st.FDEs * emit.FDEEntrySizeV2
	} else {
		b.FDEIndex = st.FDEs * emit.FDEIndexEntrySize
	}
	// A block of FRE data is counted once however many FDEs point at it:
	// by its offset, which in version 2 only the FDEs in data say (Decode
	// gives a version 2 block shared by FDEs of different FRE info a
	// record of its own each); a version 2 FDE without FREs points at the
	// next block, a version 3 one at an attribute record of its own.
	v3 := s.Header.Version != emit.Version2
	blockOf := func(i int) uint32 { return s.Index[i].FREOffset }
	if !v3 {
		order := s.Header.ABI.ByteOrder()
		fdes := emit.HeaderSize + len(s.Header.AuxHeader)
		blockOf = func(i int) uint32 { return order.Uint32(data[fdes+i*emit.FDEEntrySizeV2+8:]) }
	}
	counted := make(map[uint32]bool, st.FDEs)
	for i := range fdes {
		fde := &fdes[i]
		if fde.PCType() == emit.PCMask {
			st.PCMaskFDEs++
		}
		if fde.Type() == emit.FDEFlex {
			st.FlexFDEs++
		}
		if fde.Signal() {
			st.SignalFDEs++
		}
		if len(fde.FREs) == 0 {
			st.EmptyFDEs++
		}
		st.FREs += len(fde.FREs)
		if t := int(fde.FREType()); t < 3 {
			st.FREsByAddrSize[t] += len(fde.FREs)
		}
		if k := blockOf(i); (v3 || len(fde.FREs) > 0) && !counted[k] {
			counted[k] = true
			b.add(blockBytes(fde, s.Header.Version))
		}
		for j := range fde.FREs {
			e := &fde.FREs[j]
			if z := int(e.DataWordSize()); z < 3 {
				st.FREsByWordSize[z]++
			}
			if n := e.DataWordCount(); n < len(st.FREsByWordCount) {
				st.FREsByWordCount[n]++
			}
			if e.MangledRA() {
				st.MangledRA++
			}
		}
	}
}

// blockBytes is the breakdown of the block of FRE data of one FDE, f, in
// a section of version v.
func blockBytes(f *emit.FDE, v uint8) *statsBreakdown {
	b := &statsBreakdown{}
	if v != emit.Version2 {
		b.FDEAttributes = emit.FDEAttrSize
	}
	addr := 4
	switch f.FREType() {
	case emit.FREAddr1:
		addr = 1
	case emit.FREAddr2:
		addr = 2
	}
	for j := range f.FREs {
		e := &f.FREs[j]
		b.FREStartAddresses += addr
		b.FREInfo++
		b.DataWords += e.DataWordCount() * [...]int{1, 2, 4, 0}[e.DataWordSize()&3]
	}
	return b
}

func percent(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func writeStatsText(w io.Writer, st *statsJSON) {
	if st.DryRun {
		fmt.Fprintf(w, "%s: dry run: the .sframe section generating would write (%s, version %d)\n", displayName(st.File), st.ABI, st.Version)
	} else {
		fmt.Fprintf(w, "%s: .sframe section (%s, version %d)\n", displayName(st.File), st.ABI, st.Version)
	}
	fmt.Fprintf(w, "  functions   %d of %d described by the CFI covered (%s), %d not covered\n",
		st.CoveredFunctions, st.CFIFunctions, percent(uint64(st.CoveredFunctions), uint64(st.CFIFunctions)), st.UncoveredFunctions)
	fmt.Fprintf(w, "  text bytes  %d of %d covered (%s)\n", st.CoveredBytes, st.CFIBytes, percent(st.CoveredBytes, st.CFIBytes))
	fmt.Fprintf(w, "  FDEs        %d: %d PCMASK, %d flex, %d signal, %d without FREs\n",
		st.FDEs, st.PCMaskFDEs, st.FlexFDEs, st.SignalFDEs, st.EmptyFDEs)
	c := st.FREsByWordCount
	fmt.Fprintf(w, "  FREs        %d: start address 1/2/4 bytes %d/%d/%d; data words 1/2/4 bytes %d/%d/%d;"+
		" 0/1/2/3/4/5/6 words %d/%d/%d/%d/%d/%d/%d; mangled RA %d\n",
		st.FREs, st.FREsByAddrSize[0], st.FREsByAddrSize[1], st.FREsByAddrSize[2],
		st.FREsByWordSize[0], st.FREsByWordSize[1], st.FREsByWordSize[2],
		c[0], c[1], c[2], c[3], c[4], c[5], c[6], st.MangledRA)
	eh := st.EHFrameBytes + st.EHFrameHdrBytes
	fmt.Fprintf(w, "  size        %d bytes; .eh_frame %d + .eh_frame_hdr %d = %d (.sframe is %s of that)\n",
		st.SectionBytes, st.EHFrameBytes, st.EHFrameHdrBytes, eh, percent(uint64(st.SectionBytes), eh))
	b := &st.Breakdown
	fmt.Fprintf(w, "  bytes       header %d, FDE index %d, FDE attributes %d, FRE start addresses %d, FRE info %d, data words %d, other %d\n",
		b.Header, b.FDEIndex, b.FDEAttributes, b.FREStartAddresses, b.FREInfo, b.DataWords, b.Other)
	fmt.Fprintf(w, "  sharing     %d FDEs repeat an earlier FDE's FRE data (%d bytes): %d bytes with one block per function,"+
		" %d with each block once (%s of .eh_frame + .eh_frame_hdr); %d FDEs share in this section\n",
		st.RepeatedFDEs, st.RepeatedBytes, st.UnsharedBytes, st.SharedBytes, percent(uint64(st.SharedBytes), eh), st.SharedFDEs)
	switch {
	case st.Shared:
		fmt.Fprintf(w, "  written     with shared FRE blocks\n")
	case st.Unshared != "":
		fmt.Fprintf(w, "  written     one block of FREs per function: %s\n", st.Unshared)
	default:
		fmt.Fprintf(w, "  written     one block of FREs per function\n")
	}
	if st.DryRun {
		fmt.Fprintf(w, "  skipped     %d functions, %d bytes\n", st.UncoveredFunctions, st.UncoveredBytes)
		for _, s := range st.Skipped {
			fmt.Fprintf(w, "    %6d  %s (%d bytes)\n", s.Functions, s.Reason, s.Bytes)
		}
		fmt.Fprintf(w, "  version 2   would leave out %d more functions (--sframe-version 2 covers %d)\n",
			st.V2Lost, st.CoveredFunctions-st.V2Lost)
		for _, s := range st.V2LostReasons {
			fmt.Fprintf(w, "    %6d  %s (%d bytes)\n", s.Functions, s.Reason, s.Bytes)
		}
	}
}

// v2Loss counts the functions of the version 3 section gen (decoded as
// fdes) that version 2 cannot express (in the 2.45 layout), by reason.
func (st *statsJSON) v2Loss(gen *sframegen.Section, fdes []emit.FDE) {
	byReason := map[string]*statsSkip{}
	for i := range fdes {
		f := &fdes[i]
		if f.Size == 0 {
			continue
		}
		reason := gen.V2Refusal(i, f)
		if reason == "" {
			continue
		}
		st.V2Lost++
		k := byReason[reason]
		if k == nil {
			k = &statsSkip{Reason: reason}
			byReason[reason] = k
		}
		k.Functions++
		k.Bytes += uint64(f.Size)
	}
	st.V2LostReasons = sortedSkips(byReason)
}
