package emit

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestFuncInfo(t *testing.T) {
	tests := []struct {
		pc             PCType
		ft             FREType
		pauthB, signal bool
		want           uint8
	}{
		{PCInc, FREAddr1, false, false, 0x00},
		{PCInc, FREAddr2, false, false, 0x01},
		{PCInc, FREAddr4, false, false, 0x02},
		{PCMask, FREAddr1, false, false, 0x10},
		{PCInc, FREAddr1, true, false, 0x20},
		{PCInc, FREAddr1, false, true, 0x80},
		{PCMask, FREAddr4, true, true, 0xb2},
	}
	for _, tt := range tests {
		got := FuncInfo(tt.pc, tt.ft, tt.pauthB, tt.signal)
		if got != tt.want {
			t.Errorf("FuncInfo(%v, %v, %v, %v) = %#x, want %#x", tt.pc, tt.ft, tt.pauthB, tt.signal, got, tt.want)
		}
		f := FDE{Info: got}
		if f.PCType() != tt.pc || f.FREType() != tt.ft || f.PAuthKeyB() != tt.pauthB || f.Signal() != tt.signal {
			t.Errorf("accessors of %#x = %v %v %v %v", got, f.PCType(), f.FREType(), f.PAuthKeyB(), f.Signal())
		}
	}
	for _, tt := range []struct {
		info2 uint8
		want  FDEType
	}{{0, FDEDefault}, {1, FDEFlex}, {0xe1, FDEFlex}, {0x1f, 0x1f}} {
		if got := (FDE{Info2: tt.info2}).Type(); got != tt.want {
			t.Errorf("FDE{Info2: %#x}.Type() = %v, want %v", tt.info2, got, tt.want)
		}
	}
}

func TestFREInfo(t *testing.T) {
	tests := []struct {
		sp      bool
		count   int
		size    DataWordSize
		mangled bool
		want    uint8
	}{
		{true, 1, DataWord1B, false, 0x03},
		{true, 2, DataWord1B, false, 0x05},
		{false, 2, DataWord1B, false, 0x04},
		{true, 2, DataWord2B, false, 0x25},
		{true, 3, DataWord1B, true, 0x87},
		{true, 1, DataWord1B, true, 0x83},
		{false, 5, DataWord4B, false, 0x4a},
		{false, 0, DataWord1B, false, 0x00},
	}
	for _, tt := range tests {
		got := FREInfo(tt.sp, tt.count, tt.size, tt.mangled)
		if got != tt.want {
			t.Errorf("FREInfo(%v, %d, %v, %v) = %#x, want %#x", tt.sp, tt.count, tt.size, tt.mangled, got, tt.want)
		}
		e := FRE{Info: got}
		if e.BaseRegSP() != tt.sp || e.BaseRegFP() == tt.sp || e.DataWordCount() != tt.count ||
			e.DataWordSize() != tt.size || e.MangledRA() != tt.mangled || e.RAUndefined() != (tt.count == 0) {
			t.Errorf("accessors of %#x disagree with the inputs", got)
		}
	}
}

func TestFlexControlWord(t *testing.T) {
	tests := []struct {
		reg         uint32
		deref, regP bool
		want        uint32
	}{
		{7, false, true, 0x39},  // rsp
		{6, false, true, 0x31},  // rbp
		{10, false, true, 0x51}, // r10
		{6, true, true, 0x33},   // *(rbp+off)
		{0, true, false, 2},     // stack slot c+off
		{0, false, false, 0},    // padding
		{15, false, true, 0x79}, // s390x r15
		{16, false, true, 0x81}, // s390x f0
		{3, false, true, 0x19},  // rbx
		{536870911, false, true, 0xfffffff9},
	}
	for _, tt := range tests {
		got := FlexControlWord(tt.reg, tt.deref, tt.regP)
		if got != tt.want {
			t.Errorf("FlexControlWord(%d, %v, %v) = %#x, want %#x", tt.reg, tt.deref, tt.regP, got, tt.want)
		}
		reg, deref, regP := DecodeFlexControlWord(got)
		if reg != tt.reg || deref != tt.deref || regP != tt.regP {
			t.Errorf("DecodeFlexControlWord(%#x) = %d %v %v", got, reg, deref, regP)
		}
	}
}

func TestUWordSignExtend(t *testing.T) {
	tests := []struct {
		info  uint8
		word  int32
		uword uint32
	}{
		{FREInfo(false, 1, DataWord1B, false), -119, 0x89},
		{FREInfo(false, 1, DataWord1B, false), 0x79, 0x79},
		{FREInfo(false, 1, DataWord2B, false), -2, 0xfffe},
		{FREInfo(false, 1, DataWord4B, false), -5, 0xfffffffb},
	}
	for _, tt := range tests {
		e := FRE{Info: tt.info, Words: []int32{tt.word}}
		if got := e.UWord(0); got != tt.uword {
			t.Errorf("UWord of %d (%v) = %#x, want %#x", tt.word, e.DataWordSize(), got, tt.uword)
		}
		if got := SignExtend(tt.uword, e.DataWordSize()); got != tt.word {
			t.Errorf("SignExtend(%#x, %v) = %d, want %d", tt.uword, e.DataWordSize(), got, tt.word)
		}
	}
}

func TestS390XCFAOffset(t *testing.T) {
	tests := []struct {
		off, enc int64
		dec      int32 // S390XCFAOffsetDecode(enc)
	}{
		{160, 0, 160},
		{320, 20, 320},
		{164, 0, 160}, // truncated
		{2000, 230, 2000},
		{0, -20, 0},
		{8, -19, 8},
		{4, -19, 8},   // (4-160)/8 = -19.5 -> -19 (toward zero)
		{-4, -20, 0},  // -20.5 -> -20
		{156, 0, 160}, // -0.5 -> 0
		{152, -1, 152},
	}
	for _, tt := range tests {
		if got := S390XCFAOffsetEncode(tt.off); got != tt.enc {
			t.Errorf("S390XCFAOffsetEncode(%d) = %d, want %d", tt.off, got, tt.enc)
		}
		if got := S390XCFAOffsetDecode(int32(tt.enc)); got != tt.dec {
			t.Errorf("S390XCFAOffsetDecode(%d) = %d, want %d", tt.enc, got, tt.dec)
		}
	}
}

func TestFRETypeFor(t *testing.T) {
	tests := []struct {
		size uint32
		want FREType
	}{
		{0, FREAddr1}, {0xff, FREAddr1}, {0x100, FREAddr2}, {264, FREAddr2},
		{0xffff, FREAddr2}, {0x10000, FREAddr4}, {math.MaxUint32, FREAddr4},
	}
	for _, tt := range tests {
		if got := FRETypeFor(tt.size); got != tt.want {
			t.Errorf("FRETypeFor(%#x) = %v, want %v", tt.size, got, tt.want)
		}
	}
}

func TestDataWordSizeFor(t *testing.T) {
	tests := []struct {
		v    int64
		want DataWordSize
		ok   bool
	}{
		{0, DataWord1B, true}, {127, DataWord1B, true}, {-128, DataWord1B, true},
		{128, DataWord2B, true}, {-129, DataWord2B, true}, {255, DataWord2B, true},
		{4104, DataWord2B, true}, {32767, DataWord2B, true}, {-32768, DataWord2B, true},
		{32768, DataWord4B, true}, {100000, DataWord4B, true},
		{math.MaxInt32, DataWord4B, true}, {math.MinInt32, DataWord4B, true},
		{math.MaxInt32 + 1, DataWord4B, false}, {math.MinInt32 - 1, DataWord4B, false},
	}
	for _, tt := range tests {
		got, ok := DataWordSizeFor(tt.v)
		if got != tt.want || ok != tt.ok {
			t.Errorf("DataWordSizeFor(%d) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
	utests := []struct {
		v    uint64
		want DataWordSize
		ok   bool
	}{
		{0, DataWord1B, true}, {0x39, DataWord1B, true}, {0xff, DataWord1B, true},
		{0x100, DataWord2B, true}, {0xffff, DataWord2B, true}, {0x10000, DataWord4B, true},
		{0xffffffff, DataWord4B, true}, {0x100000000, DataWord4B, false},
	}
	for _, tt := range utests {
		got, ok := UnsignedDataWordSizeFor(tt.v)
		if got != tt.want || ok != tt.ok {
			t.Errorf("UnsignedDataWordSizeFor(%#x) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{ABIAMD64LittleEndian.String(), "SFRAME_ABI_AMD64_ENDIAN_LITTLE"},
		{ABIS390XBigEndian.String(), "SFRAME_ABI_S390X_ENDIAN_BIG"},
		{ABI(9).String(), "ABI(9)"},
		{(FlagFDESorted | FlagFDEFuncStartPCRel).String(), "SFRAME_F_FDE_SORTED|SFRAME_F_FDE_FUNC_START_PCREL"},
		{Flags(0x0c).String(), "SFRAME_F_FDE_FUNC_START_PCREL|0x8"},
		{Flags(0).String(), "0"},
		{FREAddr2.String(), "SFRAME_FRE_TYPE_ADDR2"},
		{FREType(3).String(), "FREType(3)"},
		{PCMask.String(), "SFRAME_V3_FDE_PCTYPE_MASK"},
		{FDEFlex.String(), "SFRAME_FDE_TYPE_FLEX"},
		{DataWord4B.String(), "SFRAME_FRE_DATAWORD_4B"},
		{DataWordSize(3).String(), "DataWordSize(3)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	orders := map[ABI]binary.ByteOrder{
		ABIAArch64BigEndian: binary.BigEndian, ABIAArch64LittleEndian: binary.LittleEndian,
		ABIAMD64LittleEndian: binary.LittleEndian, ABIS390XBigEndian: binary.BigEndian, 0: nil, 5: nil,
	}
	for abi, want := range orders {
		if got := abi.ByteOrder(); got != want {
			t.Errorf("%v.ByteOrder() = %v, want %v", abi, got, want)
		}
	}
}
