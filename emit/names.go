package emit

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// ByteOrder is the byte order of sections of ABI a: little-endian for AMD64
// and AArch64-LE, big-endian for s390x and AArch64-BE, nil for an unknown ABI.
func (a ABI) ByteOrder() binary.ByteOrder {
	switch a {
	case ABIAArch64LittleEndian, ABIAMD64LittleEndian:
		return binary.LittleEndian
	case ABIAArch64BigEndian, ABIS390XBigEndian:
		return binary.BigEndian
	}
	return nil
}

// IsAArch64 reports whether a is one of the two AArch64 ABIs.
func (a ABI) IsAArch64() bool {
	return a == ABIAArch64BigEndian || a == ABIAArch64LittleEndian
}

// String returns the SFRAME_ABI_* macro name of a.
func (a ABI) String() string {
	switch a {
	case ABIAArch64BigEndian:
		return "SFRAME_ABI_AARCH64_ENDIAN_BIG"
	case ABIAArch64LittleEndian:
		return "SFRAME_ABI_AARCH64_ENDIAN_LITTLE"
	case ABIAMD64LittleEndian:
		return "SFRAME_ABI_AMD64_ENDIAN_LITTLE"
	case ABIS390XBigEndian:
		return "SFRAME_ABI_S390X_ENDIAN_BIG"
	}
	return fmt.Sprintf("ABI(%d)", uint8(a))
}

// String returns the set flags as SFRAME_F_* names joined by "|", any
// unknown bits as a hexadecimal number, and "0" when no bit is set.
func (f Flags) String() string {
	if f == 0 {
		return "0"
	}
	return strings.Join(f.names(), "|")
}

// names returns the set flags as SFRAME_F_* names, then any unknown bits
// as one hexadecimal number; an empty (not nil) list when no bit is set.
func (f Flags) names() []string {
	names := []string{}
	for _, fl := range []struct {
		bit  Flags
		name string
	}{
		{FlagFDESorted, "SFRAME_F_FDE_SORTED"},
		{FlagFramePointer, "SFRAME_F_FRAME_POINTER"},
		{FlagFDEFuncStartPCRel, "SFRAME_F_FDE_FUNC_START_PCREL"},
	} {
		if f&fl.bit != 0 {
			names = append(names, fl.name)
			f &^= fl.bit
		}
	}
	if f != 0 {
		names = append(names, fmt.Sprintf("%#x", uint8(f)))
	}
	return names
}

// String returns the SFRAME_FRE_TYPE_* macro name of t.
func (t FREType) String() string {
	switch t {
	case FREAddr1:
		return "SFRAME_FRE_TYPE_ADDR1"
	case FREAddr2:
		return "SFRAME_FRE_TYPE_ADDR2"
	case FREAddr4:
		return "SFRAME_FRE_TYPE_ADDR4"
	}
	return fmt.Sprintf("FREType(%d)", uint8(t))
}

// AddrSize is the size in bytes of an FRE start address of type t, or 0
// for an invalid type.
func (t FREType) AddrSize() int {
	switch t {
	case FREAddr1:
		return 1
	case FREAddr2:
		return 2
	case FREAddr4:
		return 4
	}
	return 0
}

// Limit is the exclusive upper bound of start addresses (and of function
// sizes, for gas) that FRE type t can hold; 0 for an invalid type.
func (t FREType) Limit() uint64 {
	switch t {
	case FREAddr1:
		return 1 << 8
	case FREAddr2:
		return 1 << 16
	case FREAddr4:
		return 1 << 32
	}
	return 0
}

// String returns the SFRAME_V3_FDE_PCTYPE_* macro name of t.
func (t PCType) String() string {
	switch t {
	case PCInc:
		return "SFRAME_V3_FDE_PCTYPE_INC"
	case PCMask:
		return "SFRAME_V3_FDE_PCTYPE_MASK"
	}
	return fmt.Sprintf("PCType(%d)", uint8(t))
}

// String returns the SFRAME_FDE_TYPE_* macro name of t.
func (t FDEType) String() string {
	switch t {
	case FDEDefault:
		return "SFRAME_FDE_TYPE_DEFAULT"
	case FDEFlex:
		return "SFRAME_FDE_TYPE_FLEX"
	}
	return fmt.Sprintf("FDEType(%d)", uint8(t))
}

// String returns the SFRAME_FRE_DATAWORD_* macro name of s.
func (s DataWordSize) String() string {
	switch s {
	case DataWord1B:
		return "SFRAME_FRE_DATAWORD_1B"
	case DataWord2B:
		return "SFRAME_FRE_DATAWORD_2B"
	case DataWord4B:
		return "SFRAME_FRE_DATAWORD_4B"
	}
	return fmt.Sprintf("DataWordSize(%d)", uint8(s))
}

// Bytes is the size in bytes of one data word of size code s, or 0 for an
// invalid code.
func (s DataWordSize) Bytes() int {
	switch s {
	case DataWord1B:
		return 1
	case DataWord2B:
		return 2
	case DataWord4B:
		return 4
	}
	return 0
}
