package emit

// ABI is the sfh_abi_arch identifier of an SFrame section.
type ABI uint8

// ABI/arch identifiers (SFRAME_ABI_*).
const (
	ABIAArch64BigEndian    ABI = 1
	ABIAArch64LittleEndian ABI = 2
	ABIAMD64LittleEndian   ABI = 3
	ABIS390XBigEndian      ABI = 4
)

// Flags are the section-wide sfp_flags bits.
type Flags uint8

// Flag bits (SFRAME_F_*).
const (
	FlagFDESorted         Flags = 0x1
	FlagFramePointer      Flags = 0x2 // versions 1 and 2 only
	FlagFDEFuncStartPCRel Flags = 0x4
)

// Format versions.
const (
	Version1 = 1
	Version2 = 2
	Version3 = 3
)

// Magic is the sfp_magic value, stored in the target byte order.
const Magic = 0xdee2

// HeaderSize is the size of the version 2/3 header without auxiliary header.
const HeaderSize = 28

// FDEIndexEntrySize is the size of one version 3 FDE index entry.
const FDEIndexEntrySize = 16

// FDEAttrSize is the size of the version 3 attribute record that precedes a
// function's FREs in the FRE sub-section.
const FDEAttrSize = 5

// FREType is the width of FRE start addresses of one function (bits 0-3 of
// sfda_func_info).
type FREType uint8

// FRE start-address types (SFRAME_FRE_TYPE_*).
const (
	FREAddr1 FREType = 0
	FREAddr2 FREType = 1
	FREAddr4 FREType = 2
)

// PCType says how a function's FRE start addresses are matched (bit 4 of
// sfda_func_info).
type PCType uint8

// FDE PC types (SFRAME_V3_FDE_PCTYPE_*).
const (
	PCInc  PCType = 0 // PC >= FRE start
	PCMask PCType = 1 // PC % rep_size >= FRE start
)

// FDEType is the version 3 FDE type (bits 0-4 of sfda_func_info2).
type FDEType uint8

// FDE types (SFRAME_FDE_TYPE_*).
const (
	FDEDefault FDEType = 0
	FDEFlex    FDEType = 1
)

// DataWordSize is the size code of an FRE's data words (bits 5-6 of sfre_info).
type DataWordSize uint8

// Data-word sizes (SFRAME_FRE_DATAWORD_*).
const (
	DataWord1B DataWordSize = 0
	DataWord2B DataWordSize = 1
	DataWord4B DataWordSize = 2
)

// Header is the SFrame header (preamble included). The offsets and counts
// (num_fdes, num_fres, fre_len, fdeoff, freoff) are not stored: Encode
// computes them and Decode checks them.
type Header struct {
	Version          uint8
	Flags            Flags
	ABI              ABI
	CFAFixedFPOffset int8
	CFAFixedRAOffset int8
	AuxHeader        []byte // sfh_auxhdr_len bytes following the header
}

// FDE is one function: its index entry and its attribute record with FREs.
type FDE struct {
	// StartOffset is the raw sfdi_func_start_offset as stored: relative to
	// the field itself with FlagFDEFuncStartPCRel, else to the section start.
	StartOffset int64
	// Size is sfdi_func_size, the function's size in bytes.
	Size uint32
	// Info is the raw sfda_func_info byte (FRE type, PC type, pauth key, signal).
	Info uint8
	// Info2 is the raw sfda_func_info2 byte (FDE type).
	Info2 uint8
	// RepSize is sfda_func_rep_size, the block size of PCMask FDEs.
	RepSize uint8
	// FREOffset is sfdi_func_start_fre_off, the offset of the attribute
	// record in the FRE sub-section. Decode sets it. Encode lays out the
	// functions' FRE data in increasing FREOffset order (ties in index
	// order, or one copy for all with Section.SharedFREs) and rewrites
	// the field, so on input it is only an ordering key.
	FREOffset uint32
	FREs      []FRE
}

// FRE is one frame row entry.
type FRE struct {
	// StartAddr is the offset of the row's first PC from the function start
	// (PCInc) or within the repeated block (PCMask).
	StartAddr uint32
	// Info is the raw sfre_info byte (CFA base register, data-word count,
	// data-word size, mangled RA). The count must equal len(Words).
	Info uint8
	// Words are the data words, sign-extended from their stored size.
	Words []int32
}

// Section is a whole SFrame section.
type Section struct {
	Header Header
	// FDEs are in index order (a packed section's are in Index).
	FDEs []FDE
	// Trailer holds bytes after the FRE sub-section (s390x gas pads the
	// section to a multiple of 8); Encode writes them back verbatim.
	Trailer []byte
	// SharedFREs makes FDEs with the same FREOffset share one copy of
	// their FRE data (attribute record and FREs), which must then be the
	// same (ShareFREs sets it, with the offsets, for every function whose
	// data repeats an earlier one's; Decode, for a section whose FDEs
	// share data). Without it, FREOffset is only an ordering key.
	SharedFREs bool

	// Packed, when not nil, is the FRE sub-section already encoded, as
	// AppendPacked builds it: each function's attribute record and FREs,
	// in insertion order. The functions of a packed section are in Index,
	// not FDEs: what its FDE index holds of each (16 bytes, where an FDE
	// takes 48), the rest being in its record. PackedFREs counts the FREs
	// in Packed. A packed section is for producers of big sections, a few
	// bytes per FRE instead of an FRE struct and its words; it is read
	// (Section.FDE, Dump, ReaderFor) as the section decoded from its
	// bytes. Decode never packs.
	// Functions may share a record (ShareFREs); PackedFREs then counts
	// its FREs once per function, as the header does.
	Packed     []byte
	PackedFREs int
	// Index holds the functions of a packed section, in index order.
	Index []IndexEntry
}

// IndexEntry is one function of a packed section, as the FDE index holds
// it: its Info, Info2, RepSize and FRE count are in its attribute record
// in Packed, at FREOffset (Section.PackedFunc gives them back).
type IndexEntry struct {
	StartOffset int64  // as FDE.StartOffset
	Size        uint32 // as FDE.Size
	FREOffset   uint32 // its attribute record's offset in Packed
}

// NumFDEs returns the number of functions in s: len(s.Index) if s is
// packed, else len(s.FDEs).
func (s *Section) NumFDEs() int {
	if s.Packed != nil {
		return len(s.Index)
	}
	return len(s.FDEs)
}
