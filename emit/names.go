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

// abiNames are the SFRAME_ABI_* macro names.
var abiNames = [...]string{
	ABIAArch64BigEndian:    "SFRAME_ABI_AARCH64_ENDIAN_BIG",
	ABIAArch64LittleEndian: "SFRAME_ABI_AARCH64_ENDIAN_LITTLE",
	ABIAMD64LittleEndian:   "SFRAME_ABI_AMD64_ENDIAN_LITTLE",
	ABIS390XBigEndian:      "SFRAME_ABI_S390X_ENDIAN_BIG",
}

// String returns the SFRAME_ABI_* macro name of a.
func (a ABI) String() string { return enumName(abiNames[:], uint8(a), "ABI") }

// enumName returns the name of value v of an enumeration in names, or
// typ(v) when it has none.
func enumName(names []string, v uint8, typ string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
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

// freTypeNames are the SFRAME_FRE_TYPE_* macro names.
var freTypeNames = [...]string{
	FREAddr1: "SFRAME_FRE_TYPE_ADDR1",
	FREAddr2: "SFRAME_FRE_TYPE_ADDR2",
	FREAddr4: "SFRAME_FRE_TYPE_ADDR4",
}

// String returns the SFRAME_FRE_TYPE_* macro name of t.
func (t FREType) String() string { return enumName(freTypeNames[:], uint8(t), "FREType") }

// AddrSize is the size in bytes of an FRE start address of type t, or 0
// for an invalid type.
func (t FREType) AddrSize() int { return sizeCodeBytes(uint8(t)) }

// Limit is the exclusive upper bound of start addresses (and of function
// sizes, for gas) that FRE type t can hold; 0 for an invalid type.
func (t FREType) Limit() uint64 {
	if int(t) < len(freLimits) {
		return freLimits[t]
	}
	return 0
}

var freLimits = [...]uint64{FREAddr1: 1 << 8, FREAddr2: 1 << 16, FREAddr4: 1 << 32}

// sizeCodeBytes is the size in bytes that a 2-bit size code gives, the same
// for FRE start addresses (FREType) and data words (DataWordSize): 0 is 1
// byte, 1 is 2, 2 is 4; 0 for the invalid code 3 (or more).
func sizeCodeBytes(code uint8) int {
	if int(code) < len(sizeCodes) {
		return sizeCodes[code]
	}
	return 0
}

var sizeCodes = [...]int{1, 2, 4}

// pcTypeNames are the SFRAME_V3_FDE_PCTYPE_* macro names.
var pcTypeNames = [...]string{
	PCInc:  "SFRAME_V3_FDE_PCTYPE_INC",
	PCMask: "SFRAME_V3_FDE_PCTYPE_MASK",
}

// String returns the SFRAME_V3_FDE_PCTYPE_* macro name of t.
func (t PCType) String() string { return enumName(pcTypeNames[:], uint8(t), "PCType") }

// fdeTypeNames are the SFRAME_FDE_TYPE_* macro names.
var fdeTypeNames = [...]string{
	FDEDefault: "SFRAME_FDE_TYPE_DEFAULT",
	FDEFlex:    "SFRAME_FDE_TYPE_FLEX",
}

// String returns the SFRAME_FDE_TYPE_* macro name of t.
func (t FDEType) String() string { return enumName(fdeTypeNames[:], uint8(t), "FDEType") }

// dataWordNames are the SFRAME_FRE_DATAWORD_* macro names.
var dataWordNames = [...]string{
	DataWord1B: "SFRAME_FRE_DATAWORD_1B",
	DataWord2B: "SFRAME_FRE_DATAWORD_2B",
	DataWord4B: "SFRAME_FRE_DATAWORD_4B",
}

// String returns the SFRAME_FRE_DATAWORD_* macro name of s.
func (s DataWordSize) String() string { return enumName(dataWordNames[:], uint8(s), "DataWordSize") }

// Bytes is the size in bytes of one data word of size code s, or 0 for an
// invalid code.
func (s DataWordSize) Bytes() int { return sizeCodeBytes(uint8(s)) }
