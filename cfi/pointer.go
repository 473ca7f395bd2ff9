package cfi

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// PointerEncoding is a DW_EH_PE_* pointer encoding byte: a value format in
// the low 4 bits, an application (what the value is relative to) in bits 4-6,
// and DW_EH_PE_indirect in bit 7.
type PointerEncoding uint8

// DW_EH_PE value formats (low 4 bits).
const (
	PEAbsPtr  PointerEncoding = 0x00
	PEULEB128 PointerEncoding = 0x01
	PEUData2  PointerEncoding = 0x02
	PEUData4  PointerEncoding = 0x03
	PEUData8  PointerEncoding = 0x04
	PESigned  PointerEncoding = 0x08 // DW_EH_PE_signed: absptr, signed
	PESLEB128 PointerEncoding = 0x09
	PESData2  PointerEncoding = 0x0a
	PESData4  PointerEncoding = 0x0b
	PESData8  PointerEncoding = 0x0c
)

// DW_EH_PE applications (bits 4-6) and flags.
const (
	PEPCRel    PointerEncoding = 0x10
	PETextRel  PointerEncoding = 0x20
	PEDataRel  PointerEncoding = 0x30
	PEFuncRel  PointerEncoding = 0x40
	PEAligned  PointerEncoding = 0x50
	PEIndirect PointerEncoding = 0x80
	PEOmit     PointerEncoding = 0xff
)

var peFormatNames = map[PointerEncoding]string{
	PEAbsPtr: "absptr", PEULEB128: "uleb128", PEUData2: "udata2", PEUData4: "udata4",
	PEUData8: "udata8", PESigned: "signed", PESLEB128: "sleb128", PESData2: "sdata2",
	PESData4: "sdata4", PESData8: "sdata8",
}

var peAppNames = map[PointerEncoding]string{
	PEPCRel: "pcrel", PETextRel: "textrel", PEDataRel: "datarel", PEFuncRel: "funcrel",
	PEAligned: "aligned",
}

// String returns the encoding as DW_EH_PE names joined by "|", such as
// "DW_EH_PE_pcrel|DW_EH_PE_sdata4", or "DW_EH_PE_omit".
func (e PointerEncoding) String() string {
	if e == PEOmit {
		return "DW_EH_PE_omit"
	}
	var parts []string
	if e&PEIndirect != 0 {
		parts = append(parts, "DW_EH_PE_indirect")
	}
	if app := e & 0x70; app != 0 {
		if n, ok := peAppNames[app]; ok {
			parts = append(parts, "DW_EH_PE_"+n)
		} else {
			parts = append(parts, fmt.Sprintf("DW_EH_PE_0x%02x", uint8(app)))
		}
	}
	if n, ok := peFormatNames[e&0x0f]; ok {
		parts = append(parts, "DW_EH_PE_"+n)
	} else {
		parts = append(parts, fmt.Sprintf("DW_EH_PE_0x%x", uint8(e&0x0f)))
	}
	return strings.Join(parts, "|")
}

// PointerContext is what decoding a DW_EH_PE pointer needs besides its bytes:
// the byte order, the address size, and the bases of the relative
// applications.
type PointerContext struct {
	Order    binary.ByteOrder
	AddrSize int // size of an absptr in bytes (4 or 8)
	// SectionAddr is the address of the CFI section; a pcrel value is
	// relative to SectionAddr + the section offset of the value.
	SectionAddr uint64
	// TextAddr is the base of DW_EH_PE_textrel: the .text section address.
	TextAddr uint64
	// DataAddr is the base of DW_EH_PE_datarel: the .got section address
	// where one exists (as the LSB describes for .eh_frame), else 0.
	DataAddr uint64
	// FuncAddr is the base of DW_EH_PE_funcrel: the start of the function
	// of the FDE being decoded.
	FuncAddr uint64
	// Indirect reads an AddrSize-byte pointer at a loaded address for
	// DW_EH_PE_indirect. Nil: indirect pointers are an error.
	Indirect func(addr uint64) (uint64, error)
}
