package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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
	sframeVer := sframeVersionFlags(fs)
	budget := c.memoryLimitFlag(fs, readMemoryUsage)
	setUsage(fs, c.stdout, "sframe-gen stats [--json] [--dry-run] [GENERATE-OPTIONS] FILE",
		"Coverage and cost of FILE's .sframe section (or, without one, of the section\n"+
			"generating would write with the same options: nothing is written); of a static\n"+
			"archive, of each member, named ARCHIVE(MEMBER).")
	if code, done := c.parseOneFile(fs, args, help, "stats"); done {
		return code
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
	b, err := budget()
	if err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	// The dry run's generator charges what it reads to the input's
	// meter, given back with the input's.
	var meter *sframegen.Meter
	admit := func(cost sframegen.Cost) (func(), error) { return func() {}, meter.Charge(cost) }
	g, err := sframegen.NewGenerator(o.library(), sframegen.Resources{Admit: admit})
	if err != nil {
		return c.fail("", commandUsage("stats", err.Error()))
	}
	file := fs.Arg(0)
	status := exitOK
	err = readInputs(file, "no member has a .sframe section or call-frame information", b, func(in elfInput) bool {
		meter = in.meter
		if in.member && in.err == nil && verify.FindSection(in.f) == nil && !sframegen.Generates(in.f) {
			return false // generate leaves such a member as it is
		}
		err := in.err
		if err == nil {
			err = c.writeStats(in, g, *dry, *asJSON)
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
	st.File = in.name
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
}

type statsSkip struct {
	Reason    string `json:"reason"`
	Functions int    `json:"functions"`
	Bytes     uint64 `json:"bytes"`
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
		st.sectionStats(s)
		if err := st.sharingStats(s); err != nil {
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
		return nil, errors.New("no .sframe section and no call-frame information")
	case errors.Is(err, sframegen.ErrNoFunctions) && gen != nil:
		// Nothing is written: every function is left out.
	case err != nil:
		return nil, err
	}
	frames, rerr := cfi.Read(f, src)
	if rerr != nil {
		return nil, rerr
	}
	for _, fde := range frames.FDEs {
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
	s, err := emit.Decode(gen.Bytes())
	if err != nil {
		return nil, fmt.Errorf("encoding .sframe: %w", err)
	}
	st.SectionBytes = gen.Size()
	st.sectionStats(s)
	if err := st.sharingStats(s); err != nil {
		return nil, fmt.Errorf("encoding .sframe: %w", err)
	}
	if s.Header.Version == emit.Version3 {
		st.v2Loss(gen, s)
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
// ShareFREs on copies of it) and how many of its FDEs share already.
func (st *statsJSON) sharingStats(s *emit.Section) error {
	// Each function its own block, in the order of the FDEs.
	unshared := emit.Section{Header: s.Header, Trailer: s.Trailer}
	first := map[uint32]bool{}
	for i := range s.Index {
		off := s.Index[i].FREOffset
		if first[off] {
			st.SharedFDEs++
		}
		first[off] = true
		f, err := s.FDE(i)
		if err != nil {
			return err
		}
		if err := unshared.AppendFDE(f); err != nil {
			return err
		}
	}
	var err error
	if st.UnsharedBytes, err = unshared.Size(); err != nil {
		return err
	}
	shared := unshared
	shared.Index, shared.FREData = slices.Clone(unshared.Index), slices.Clone(unshared.FREData)
	if st.RepeatedFDEs, err = shared.ShareFREs(); err != nil {
		return err
	}
	if st.SharedBytes, err = shared.Size(); err != nil {
		return err
	}
	st.RepeatedBytes = st.UnsharedBytes - st.SharedBytes
	return nil
}

// sectionStats counts the FDEs and FREs of s.
func (st *statsJSON) sectionStats(s *emit.Section) {
	st.ABI, st.Version = s.Header.ABI.String(), s.Header.Version
	st.FDEs = s.NumFDEs()
	for i := range s.NumFDEs() {
		fde, err := s.FDE(i)
		if err != nil {
			continue // (a section lower made)
		}
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
// s) that version 2 cannot express (in the 2.45 layout), by reason.
func (st *statsJSON) v2Loss(gen *sframegen.Section, s *emit.Section) {
	byReason := map[string]*statsSkip{}
	for i := range s.NumFDEs() {
		f, err := s.FDE(i)
		if err != nil || f.Size == 0 {
			continue
		}
		reason := gen.V2Refusal(i, &f)
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
