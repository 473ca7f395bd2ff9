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

	// rel holds the relocations of a relocatable object's CFI section, by
	// section offset. With relocations, indirection is not followed.
	rel map[uint64]relocation
}

// relocation is what a relocatable object's relocation puts at one offset
// of the CFI section: the target's value S + A, relative to the start of
// section shndx.
type relocation struct {
	value   uint64
	shndx   int    // -1: an undefined or absolute symbol
	badType uint32 // a relocation type CFI does not use, if not 0
}

// Decode decodes a pointer with encoding enc at data[pos:], where data[0]
// is at section offset secBase. It returns the value and the position after
// it.
func (p *PointerContext) Decode(data []byte, pos int, enc PointerEncoding, secBase uint64) (uint64, int, error) {
	v, _, next, err := p.decode(data, pos, enc, secBase)
	return v, next, err
}

// decode is Decode that also returns the section index a relocation gave
// the value (ET_REL), or -1.
func (p *PointerContext) decode(data []byte, pos int, enc PointerEncoding, secBase uint64) (uint64, int, int, error) {
	if enc == PEOmit {
		return 0, -1, pos, nil
	}
	app := enc & 0x70
	if app == PEAligned {
		size := p.AddrSize
		if size != 4 && size != 8 {
			size = 8
		}
		addr := p.SectionAddr + secBase + uint64(pos)
		pad := (uint64(size) - addr%uint64(size)) % uint64(size)
		if pad > uint64(len(data)-pos) {
			return 0, -1, pos, errTruncated
		}
		pos += int(pad)
	}
	start := pos
	var v uint64
	var size int
	signed := false
	switch enc & 0x0f {
	case PEAbsPtr, PESigned:
		size = p.AddrSize
		signed = enc&0x0f == PESigned
	case PEULEB128:
		u, next, err := ULEB128(data, pos)
		if err != nil {
			return 0, -1, pos, err
		}
		v, pos = u, next
	case PESLEB128:
		s, next, err := SLEB128(data, pos)
		if err != nil {
			return 0, -1, pos, err
		}
		v, pos = uint64(s), next
	case PEUData2:
		size = 2
	case PEUData4:
		size = 4
	case PEUData8:
		size = 8
	case PESData2:
		size, signed = 2, true
	case PESData4:
		size, signed = 4, true
	case PESData8:
		size, signed = 8, true
	default:
		return 0, -1, pos, fmt.Errorf("unknown pointer encoding %#x", uint8(enc))
	}
	if size != 0 {
		if size > len(data)-pos {
			return 0, -1, pos, errTruncated
		}
		b := data[pos : pos+size]
		switch size {
		case 2:
			v = uint64(p.Order.Uint16(b))
			if signed {
				v = uint64(int64(int16(v)))
			}
		case 4:
			v = uint64(p.Order.Uint32(b))
			if signed {
				v = uint64(int64(int32(v)))
			}
		case 8:
			v = p.Order.Uint64(b)
		default:
			return 0, -1, pos, fmt.Errorf("address size %d not supported", size)
		}
		pos += size
	}
	if p.rel != nil {
		// A relocatable object: the relocation gives S + A, which is the
		// final value whatever the application (pcrel: P + S + A - P).
		if r, ok := p.rel[secBase+uint64(start)]; ok {
			if r.badType != 0 {
				return 0, -1, pos, fmt.Errorf("unsupported relocation type %d", r.badType)
			}
			return r.value, r.shndx, pos, nil
		}
	}
	switch app {
	case 0, PEAligned:
	case PEPCRel:
		v += p.SectionAddr + secBase + uint64(start)
	case PETextRel:
		v += p.TextAddr
	case PEDataRel:
		v += p.DataAddr
	case PEFuncRel:
		v += p.FuncAddr
	default:
		return 0, -1, pos, fmt.Errorf("unknown pointer encoding %#x", uint8(enc))
	}
	if p.AddrSize == 4 {
		v &= 0xffffffff
	}
	if enc&PEIndirect != 0 && p.rel == nil {
		if p.Indirect == nil {
			return 0, -1, pos, fmt.Errorf("indirect pointer to %#x: no loaded data to read it from", v)
		}
		w, err := p.Indirect(v)
		if err != nil {
			return 0, -1, pos, fmt.Errorf("indirect pointer to %#x: %w", v, err)
		}
		v = w
	}
	return v, -1, pos, nil
}
