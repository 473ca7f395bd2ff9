package stats

import (
	"sort"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/verify"
)

// Stats is the statistics of one SFrame section (docs/stats.md): its
// coverage of the functions the CFI describes, its FDEs and FREs by kind,
// where its bytes go and what sharing FRE data saves. The JSON names are
// those of "sframe-gen stats --json".
type Stats struct {
	File string `json:"file"`
	// Kind is the file's kind (elfread.Kind: "executable",
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
	Skipped []Reason `json:"skipped"`

	// V2Lost counts, in a dry run, the functions of the version 3
	// section that version 2 (--sframe-version 2) would leave out, by
	// reason in V2LostReasons.
	V2Lost        int      `json:"v2_lost_functions"`
	V2LostReasons []Reason `json:"v2_lost"`

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
	// with --share-fres).
	// Shared says whether the section shares FRE blocks (a dry run: the
	// default command's choice, sframegen.Section.Shared), and Unshared why
	// not, when known.
	Shared     bool   `json:"shared"`
	Unshared   string `json:"unshared_reason,omitempty"`
	SharedFDEs int    `json:"shared_fdes"`

	Sizes
}

// Sizes are the sizes of a section (Stats) or of the sections of many
// files (Counts), and what sharing blocks of FRE data saves in them.
type Sizes struct {
	// RepeatedFDEs counts the FDEs whose FRE data is the same bytes as an
	// earlier FDE's, shared or not, and RepeatedBytes what their copies
	// take when each function has its own. UnsharedBytes and SharedBytes
	// are the section's size with one block of FRE data per function and
	// with every repeated block shared (what --share-fres writes).
	RepeatedFDEs  int `json:"repeated_fdes"`
	RepeatedBytes int `json:"repeated_fre_bytes"`
	UnsharedBytes int `json:"sframe_bytes_unshared"`
	SharedBytes   int `json:"sframe_bytes_shared"`

	SectionBytes    int    `json:"sframe_bytes"`
	EHFrameBytes    uint64 `json:"eh_frame_bytes"`
	EHFrameHdrBytes uint64 `json:"eh_frame_hdr_bytes"`
	// Breakdown says where the section's bytes go; its parts add up to
	// SectionBytes.
	Breakdown Breakdown `json:"breakdown"`
}

// Add adds o's sizes to s's.
func (s *Sizes) Add(o *Sizes) {
	s.RepeatedFDEs += o.RepeatedFDEs
	s.RepeatedBytes += o.RepeatedBytes
	s.UnsharedBytes += o.UnsharedBytes
	s.SharedBytes += o.SharedBytes
	s.SectionBytes += o.SectionBytes
	s.EHFrameBytes += o.EHFrameBytes
	s.EHFrameHdrBytes += o.EHFrameHdrBytes
	s.Breakdown.Add(&o.Breakdown)
}

// Breakdown splits a section's bytes by what they hold, as written
// (a block of FRE data shared by several FDEs is counted once).
type Breakdown struct {
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

// Add adds o's parts to b's.
func (b *Breakdown) Add(o *Breakdown) {
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

// Sum is the section size the parts add up to (SharingSaved is not a
// part).
func (b *Breakdown) Sum() int {
	return b.Header + b.FDEIndex + b.FDEAttributes + b.FREStartAddresses + b.FREInfo + b.DataWords + b.Other
}

// Reason is a count of functions left out of a section for one reason.
type Reason struct {
	Reason    string `json:"reason"`
	Functions int    `json:"functions"`
	Bytes     uint64 `json:"bytes"`
}

// Tally counts functions and their bytes by reason.
type Tally map[string]*Reason

// Add counts one function of size bytes left out for reason.
func (t Tally) Add(reason string, bytes uint64) {
	k := t[reason]
	if k == nil {
		k = &Reason{Reason: reason}
		t[reason] = k
	}
	k.Functions++
	k.Bytes += bytes
}

// Sorted lists the counts, the most functions first (then by reason);
// empty, not nil, without any.
func (t Tally) Sorted() []Reason {
	list := []Reason{}
	for _, k := range t {
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

// Measure counts the FDEs and FREs of the SFrame section s (version 2 or
// 3), decoded from data (emit.Decode), fdes its functions with their FREs
// (s.Functions()): the breakdown of its bytes, and what sharing FRE data
// saves in it (emit's ShareFREs on copies of it). Coverage is left to the
// caller: [Stats.Cover] from a verify report, or the lowering's own count.
func Measure(s *emit.Section, fdes []emit.FDE, data []byte) (*Stats, error) {
	st := &Stats{Skipped: []Reason{}, V2LostReasons: []Reason{}, Sizes: Sizes{SectionBytes: len(data)}}
	st.sectionStats(s, fdes, data)
	if err := st.sharingStats(s, fdes); err != nil {
		return nil, err
	}
	return st, nil
}

// Cover sets st's coverage from rep, the section checked against the CFI
// (verify.File): the functions the CFI describes, and those the section
// does not cover.
func (st *Stats) Cover(rep *verify.Report) {
	st.CFIFunctions, st.CFIBytes = rep.CFIFunctions, rep.CFIBytes
	st.UncoveredFunctions = len(rep.Uncovered)
	for _, u := range rep.Uncovered {
		st.UncoveredBytes += u.Size
	}
	st.CoveredFunctions = st.CFIFunctions - st.UncoveredFunctions
	st.CoveredBytes = st.CFIBytes - st.UncoveredBytes
}

// sharingStats measures what sharing FRE data saves in s (emit's
// ShareFREs on a copy of it, one block per function) and how many of its
// FDEs share already; and what its FRE types narrower than the functions'
// sizes ask for save (lower.Options.NarrowFREs, with --merge-fdes): GNU's
// form (UnsharedBytes) has each FDE's FRE type as its size asks for.
func (st *Stats) sharingStats(s *emit.Section, fdes []emit.FDE) error {
	// Each function its own block, in the order of the FDEs: as written,
	// and in GNU's form.
	written := emit.Section{Header: s.Header, Trailer: s.Trailer}
	gnu := written
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
		if sized := emit.FRETypeFor(f.Size); f.PCType() == emit.PCInc && f.FREType() < sized {
			f.Info = withFREType(f.Info, sized)
		}
		if err := gnu.AppendFDE(f); err != nil {
			return err
		}
	}
	gnuBytes, err := gnu.Size()
	if err != nil {
		return err
	}
	writtenBytes, err := written.Size()
	if err != nil {
		return err
	}
	st.UnsharedBytes = gnuBytes
	if st.RepeatedFDEs, err = written.ShareFREs(); err != nil {
		return err
	}
	if st.SharedBytes, err = written.Size(); err != nil {
		return err
	}
	st.RepeatedBytes = writtenBytes - st.SharedBytes
	st.Breakdown.NarrowingSaved = gnuBytes - writtenBytes
	st.Breakdown.SharingSaved = writtenBytes - st.SectionBytes
	return nil
}

// withFREType is the FDE info byte info with FRE type t.
func withFREType(info uint8, t emit.FREType) uint8 { return info&^0xf | uint8(t) }

// sectionStats counts the FDEs and FREs of s, decoded from data into fdes.
func (st *Stats) sectionStats(s *emit.Section, fdes []emit.FDE, data []byte) {
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
			b.Add(blockBytes(fde, s.Header.Version))
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
func blockBytes(f *emit.FDE, v uint8) *Breakdown {
	b := &Breakdown{}
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

// Total is the sum of the statistics of a tree (docs/stats.md).
type Total struct {
	// Counts.Files counts the files and archive members described
	// (one object each); FilesWithoutCFI the ELF files and members that have neither
	// .sframe nor CFI; FilesSkipped those that are not ELF or are for an
	// architecture without SFrame; FilesFailed those that could not be
	// read.
	FilesWithoutCFI int `json:"files_without_cfi"`
	FilesSkipped    int `json:"files_skipped"`
	FilesFailed     int `json:"files_failed"`
	// InstalledBytes is the size of every ELF file and static archive
	// read (with or without CFI): what the SFrame adds to.
	InstalledBytes int64 `json:"installed_bytes"`
	Counts
	// ByKind sums the same counts by the kind of file (elfread.Kind,
	// or "archive-member"), ByABI by the section's ABI.
	ByKind map[string]*Counts `json:"by_kind"`
	ByABI  map[string]*Counts `json:"by_abi"`
}

// NewTotal returns an empty Total.
func NewTotal() *Total {
	return &Total{ByKind: map[string]*Counts{}, ByABI: map[string]*Counts{}}
}

// Add counts st in the total, its kind's and its ABI's.
func (t *Total) Add(st *Stats) {
	t.Counts.Add(st)
	for _, by := range []struct {
		m   map[string]*Counts
		key string
	}{{t.ByKind, st.Kind}, {t.ByABI, st.ABI}} {
		c := by.m[by.key]
		if c == nil {
			c = &Counts{}
			by.m[by.key] = c
		}
		c.Add(st)
	}
}

// File is what the statistics of a tree found in one of its files
// (sframegen's Generator.TreeStats): the statistics of the file, or
// of each member of a static archive, and the counts of what was not
// described.
type File struct {
	// Objects are the statistics of the file or of its members, in
	// order.
	Objects []*Stats
	// InstalledBytes is the file's size when it is an ELF file or an
	// archive that could be read, else 0.
	InstalledBytes int64
	// WithoutCFI counts the ELF files and members with neither .sframe
	// nor CFI, Skipped those that are not ELF or are for an architecture
	// without SFrame.
	WithoutCFI, Skipped int
	// Failed are the file and members that could not be read, in order.
	Failed []Failure
}

// Failure is a file or archive member that could not be read: its name
// (the path, or ARCHIVE(MEMBER)) and why.
type Failure struct {
	Name string
	Err  error
}

// AddFile counts f in the total: each of its objects (Add), its size and
// what it left undescribed.
func (t *Total) AddFile(f *File) {
	t.InstalledBytes += f.InstalledBytes
	t.FilesWithoutCFI += f.WithoutCFI
	t.FilesSkipped += f.Skipped
	t.FilesFailed += len(f.Failed)
	for _, st := range f.Objects {
		t.Add(st)
	}
}

// Counts are the figures of Stats that add up over files.
type Counts struct {
	Files              int    `json:"files"`
	FileBytes          int64  `json:"file_bytes"`
	CFIFunctions       int    `json:"cfi_functions"`
	CFIBytes           uint64 `json:"cfi_bytes"`
	CoveredFunctions   int    `json:"covered_functions"`
	CoveredBytes       uint64 `json:"covered_bytes"`
	UncoveredFunctions int    `json:"uncovered_functions"`
	UncoveredBytes     uint64 `json:"uncovered_bytes"`
	FDEs               int    `json:"fdes"`
	FREs               int    `json:"fres"`
	Sizes
}

// Add adds the counts of one file's statistics.
func (c *Counts) Add(st *Stats) {
	c.Files++
	c.FileBytes += st.FileBytes
	c.CFIFunctions += st.CFIFunctions
	c.CFIBytes += st.CFIBytes
	c.CoveredFunctions += st.CoveredFunctions
	c.CoveredBytes += st.CoveredBytes
	c.UncoveredFunctions += st.UncoveredFunctions
	c.UncoveredBytes += st.UncoveredBytes
	c.FDEs += st.FDEs
	c.FREs += st.FREs
	c.Sizes.Add(&st.Sizes)
}
