package emit

import "math"

// More format constants.
const (
	// FDEEntrySizeV2 is the size of one version 2 FDE (index and
	// attributes together).
	FDEEntrySizeV2 = 20
	// MaxDataWords is the largest data-word count libsframe accepts in an
	// FRE (MAX_NUM_DATAWORDS).
	MaxDataWords = 6
	// MaxFREsPerFDE is the largest FRE count of a version 3 function: the
	// attribute record stores it in 16 bits.
	MaxFREsPerFDE = math.MaxUint16
	// RAOffsetInvalid is the padding data word that stands for "no RA rule"
	// (SFRAME_FRE_RA_OFFSET_INVALID).
	RAOffsetInvalid = 0
	// S390XCFAOffsetAdjustment is added to s390x CFA offsets before they
	// are divided by S390XCFAOffsetAlignment (SFRAME_S390X_SP_VAL_OFFSET).
	S390XCFAOffsetAdjustment = -160
	// S390XCFAOffsetAlignment is the s390x CFA offset scaling factor.
	S390XCFAOffsetAlignment = 8
)

// Data-word indexes of a default FDE's FRE (SFRAME_FRE_*_OFFSET_IDX). On
// AMD64, whose RA is at a fixed offset, the FP word is at index 1.
const (
	CFAWordIndex = 0
	RAWordIndex  = 1
	FPWordIndex  = 2
)

// FuncInfo builds an sfda_func_info byte.
func FuncInfo(pc PCType, ft FREType, pauthKeyB, signal bool) uint8 {
	v := uint8(pc&1)<<4 | uint8(ft&0xf)
	if pauthKeyB {
		v |= 1 << 5
	}
	if signal {
		v |= 1 << 7
	}
	return v
}

// FREType is the width of the function's FRE start addresses (info bits 0-3).
func (f FDE) FREType() FREType { return freTypeOf(f.Info) }

// freTypeOf is the FRE type an FDE's info byte gives (FDE.FREType, for a
// caller that has the byte rather than a copy of the FDE).
func freTypeOf(info uint8) FREType { return FREType(info & 0xf) }

// PCType says how the function's FRE start addresses match PCs (info bit 4).
func (f FDE) PCType() PCType { return PCType(f.Info >> 4 & 1) }

// PAuthKeyB reports whether an AArch64 function signs its return address
// with the B key (info bit 5).
func (f FDE) PAuthKeyB() bool { return f.Info>>5&1 != 0 }

// Signal reports whether the function is a signal trampoline (info bit 7).
func (f FDE) Signal() bool { return f.Info>>7&1 != 0 }

// Type is the version 3 FDE type (info2 bits 0-4).
func (f FDE) Type() FDEType { return FDEType(f.Info2 & 0x1f) }

// FREInfo builds an sfre_info byte. count is masked to 4 bits.
func FREInfo(baseSP bool, count int, size DataWordSize, mangledRA bool) uint8 {
	v := uint8(size&3)<<5 | uint8(count&0xf)<<1
	if baseSP {
		v |= 1
	}
	if mangledRA {
		v |= 1 << 7
	}
	return v
}

// BaseRegSP reports whether a default FRE's CFA is based on the stack
// pointer (info bit 0 set).
func (e FRE) BaseRegSP() bool { return e.Info&1 != 0 }

// BaseRegFP reports whether a default FRE's CFA is based on the frame
// pointer (info bit 0 clear).
func (e FRE) BaseRegFP() bool { return e.Info&1 == 0 }

// DataWordCount is the number of data words (info bits 1-4).
func (e FRE) DataWordCount() int { return int(e.Info >> 1 & 0xf) }

// DataWordSize is the size code of the data words (info bits 5-6).
func (e FRE) DataWordSize() DataWordSize { return DataWordSize(e.Info >> 5 & 3) }

// MangledRA reports whether the return address is signed (info bit 7).
func (e FRE) MangledRA() bool { return e.Info>>7&1 != 0 }

// RAUndefined reports whether the FRE marks an outermost frame: it has no
// data words.
func (e FRE) RAUndefined() bool { return e.DataWordCount() == 0 }

// UWord is data word i read as unsigned, zero-extended from its stored
// size, the way control words are read. i must be in range.
func (e FRE) UWord(i int) uint32 {
	return uint32(e.Words[i]) & sizeMask(e.DataWordSize())
}

func sizeMask(s DataWordSize) uint32 {
	switch s {
	case DataWord1B:
		return 0xff
	case DataWord2B:
		return 0xffff
	}
	return 0xffffffff
}

// SignExtend returns the low bytes of v, the size of s, sign-extended: the
// form Decode stores in FRE.Words.
func SignExtend(v uint32, s DataWordSize) int32 {
	switch s {
	case DataWord1B:
		return int32(int8(v))
	case DataWord2B:
		return int32(int16(v))
	}
	return int32(v)
}

// FlexControlWord builds a flex FDE control word:
// reg<<3 | deref<<1 | regP (SFRAME_V3_FLEX_FDE_CTRLWORD_ENCODE). The
// register is not masked, as in GNU's macro.
func FlexControlWord(reg uint32, deref, regP bool) uint32 {
	w := reg << 3
	if deref {
		w |= 2
	}
	if regP {
		w |= 1
	}
	return w
}

// DecodeFlexControlWord splits a control word (read unsigned, see UWord)
// into its register number, dereference bit and register bit.
func DecodeFlexControlWord(w uint32) (reg uint32, deref, regP bool) {
	return w >> 3, w>>1&1 != 0, w&1 != 0
}

// S390XCFAOffsetEncode is the stored form of an s390x CFA offset:
// (off - 160) / 8, the division truncating toward zero as in C
// (SFRAME_V2_S390X_CFA_OFFSET_ENCODE).
func S390XCFAOffsetEncode(off int64) int64 {
	return (off + S390XCFAOffsetAdjustment) / S390XCFAOffsetAlignment
}

// S390XCFAOffsetDecode is the CFA offset of a stored s390x value v:
// v*8 + 160, in 32-bit arithmetic as libsframe does it.
func S390XCFAOffsetDecode(v int32) int32 {
	return v*S390XCFAOffsetAlignment - S390XCFAOffsetAdjustment
}

// FRETypeFor is the FRE type gas and ld choose for a function of the given
// size: ADDR1 below 0x100, ADDR2 below 0x10000, else ADDR4.
func FRETypeFor(funcSize uint32) FREType {
	switch {
	case funcSize < 0x100:
		return FREAddr1
	case funcSize < 0x10000:
		return FREAddr2
	}
	return FREAddr4
}

// DataWordSizeFor is the smallest data-word size whose signed truncation
// of v equals v (gas get_offset_size_in_bytes). ok is false when v does not
// fit in 32 bits.
func DataWordSizeFor(v int64) (s DataWordSize, ok bool) {
	if v != int64(int32(v)) {
		return DataWord4B, false
	}
	w := int32(v)
	return signedWordSize(uint32(w ^ w>>31)), true
}

// signedWordSize is the data-word size rule of signed words, the one
// DataWordSizeFor and MinWriter apply: the smallest size that holds
// words whose magnitudes less one if negative (v^(v>>31)), ORed
// together, are m. A word fits k signed bits when that is below
// 1<<(k-1).
func signedWordSize(m uint32) DataWordSize {
	switch {
	case m >= 1<<15:
		return DataWord4B
	case m >= 1<<7:
		return DataWord2B
	}
	return DataWord1B
}

// UnsignedDataWordSizeFor is the smallest data-word size that holds v as
// an unsigned number, for control words (gas get_udata_size_in_bytes). ok
// is false when v does not fit in 32 bits.
func UnsignedDataWordSizeFor(v uint64) (s DataWordSize, ok bool) {
	switch {
	case v <= math.MaxUint8:
		return DataWord1B, true
	case v <= math.MaxUint16:
		return DataWord2B, true
	case v <= math.MaxUint32:
		return DataWord4B, true
	}
	return DataWord4B, false
}

// wordFits reports whether Encode can store v in a word of size s: v is in
// the signed or the unsigned range of that size (control words are built
// unsigned, Decode returns them sign-extended; both encode the same bytes).
func wordFits(v int32, s DataWordSize) bool {
	switch s {
	case DataWord1B:
		return v >= math.MinInt8 && v <= math.MaxUint8
	case DataWord2B:
		return v >= math.MinInt16 && v <= math.MaxUint16
	case DataWord4B:
		return true
	}
	return false
}
