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

// FDE is one function as Section.FDE gives it: its index entry and its
// attribute record, with its FREs decoded. It is also what the builder
// (Section.AppendFDE) takes.
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
	// FREOffset is the offset of the function's attribute record in
	// Section.FREData (Section.FDE sets it; AppendFDE ignores it).
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

// Section is a whole SFrame section, in the one form every part of the
// program reads and writes: the FDE index (Index) and the FRE sub-section
// already encoded in the version 3 layout (FREData), a few bytes per FRE.
// Build one with AppendFDE (or an FDEWriter or MinWriter, FRE by FRE),
// or Decode its bytes; read its functions with NumFDEs, FDE (a function
// with its FREs decoded) and Func (without them). Encode writes it in the
// version its Header says: version 3 as it is, version 2 with the
// attribute records' fields moved into the 20-byte FDEs.
type Section struct {
	Header Header
	// Index holds the functions in index order.
	Index []IndexEntry
	// FREData is the FRE sub-section in the version 3 layout: each
	// function's attribute record directly followed by its FREs, the
	// records one after the other (each reached from at least one index
	// entry; several entries may share one, ShareFREs), in the byte
	// order of the section's ABI.
	FREData []byte
	// FRECount counts the FREs of FREData, a record shared by several
	// functions once for each, as the header counts them.
	FRECount int
	// Trailer holds bytes after the FRE sub-section (s390x gas pads the
	// section to a multiple of 8); Encode writes them back verbatim.
	Trailer []byte
	// SharedV2 makes Encode, in version 2, write each block of FREs
	// once: a record whose FREs (and FRE type) repeat an earlier
	// record's points at that copy, also when its info or rep size
	// differ (version 2 keeps those in the FDE, where a record holds
	// them). ShareFREs sets it on a version 2 section; Decode, on a
	// version 2 section whose FDEs share FREs. Version 3 ignores it.
	SharedV2 bool
}

// IndexEntry is one function as the version 3 FDE index holds it: its
// Info, Info2, RepSize and FRE count are in its attribute record in
// FREData, at FREOffset (Section.Func gives them back).
type IndexEntry struct {
	StartOffset int64  // as FDE.StartOffset
	Size        uint32 // as FDE.Size
	FREOffset   uint32 // its attribute record's offset in FREData
}
