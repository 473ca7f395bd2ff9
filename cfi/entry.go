package cfi

import (
	"errors"
	"fmt"
	"strings"
)

// parseCIE decodes the CIE with header h.
func (p *parser) parseCIE(h *header) (*CIE, error) {
	data := p.data[:h.end]
	pos := h.body
	c := &CIE{Offset: h.off, Format64: h.format64, AddressSize: uint8(p.ptr.AddrSize), LSDAEncoding: uint8(PEOmit)}
	if pos >= len(data) {
		return nil, errors.New("CIE truncated before its version")
	}
	c.Version = data[pos]
	pos++
	switch c.Version {
	case 1, 3, 4:
	default:
		return nil, fmt.Errorf("unsupported CIE version %d", c.Version)
	}
	// The string is short in real CIEs; bounding the scan keeps FDEs that
	// point into a long forged "CIE" from costing quadratic time.
	const maxAug = 256
	nul := -1
	for i := pos; i < len(data) && i <= pos+maxAug; i++ {
		if data[i] == 0 {
			nul = i
			break
		}
	}
	if nul < 0 {
		if len(data)-pos > maxAug {
			return nil, fmt.Errorf("augmentation string longer than %d bytes", maxAug)
		}
		return nil, errors.New("augmentation string not terminated")
	}
	c.Augmentation = string(data[pos:nul])
	pos = nul + 1
	aug := c.Augmentation
	if strings.HasPrefix(aug, "eh") {
		// Old GCC: "eh" is followed by the address of the exception table.
		if p.ptr.AddrSize > len(data)-pos {
			return nil, errors.New("CIE truncated in its \"eh\" data")
		}
		pos += p.ptr.AddrSize
		aug = aug[2:]
	}
	if c.Version >= 4 {
		if 2 > len(data)-pos {
			return nil, errors.New("CIE truncated in its address size fields")
		}
		c.AddressSize, c.SegmentSize = data[pos], data[pos+1]
		pos += 2
		if c.AddressSize != 2 && c.AddressSize != 4 && c.AddressSize != 8 {
			return nil, fmt.Errorf("unsupported address size %d", c.AddressSize)
		}
		if c.SegmentSize > 8 {
			return nil, fmt.Errorf("unsupported segment selector size %d", c.SegmentSize)
		}
	}
	var err error
	if c.CodeAlign, pos, err = ULEB128(data, pos); err != nil {
		return nil, fmt.Errorf("code alignment factor: %w", err)
	}
	if c.DataAlign, pos, err = SLEB128(data, pos); err != nil {
		return nil, fmt.Errorf("data alignment factor: %w", err)
	}
	if c.Version == 1 {
		if pos >= len(data) {
			return nil, fmt.Errorf("return address register: %w", errTruncated)
		}
		c.RAColumn = uint64(data[pos])
		pos++
	} else if c.RAColumn, pos, err = ULEB128(data, pos); err != nil {
		return nil, fmt.Errorf("return address register: %w", err)
	}
	if !p.eh {
		c.FDEEncoding = uint8(PEAbsPtr)
	}
	if aug != "" {
		if aug[0] != 'z' {
			return nil, fmt.Errorf("unknown augmentation %q", c.Augmentation)
		}
		if pos, err = p.augmentation(c, aug[1:], pos, data); err != nil {
			return nil, err
		}
		c.hasAugData = true
	}
	c.Initial = data[pos:h.end:h.end]
	c.InitialOffset = uint64(pos)
	return c, nil
}

// augmentation decodes the augmentation data of a "z" CIE: the characters
// after the 'z' and the data at data[pos:].
func (p *parser) augmentation(c *CIE, chars string, pos int, data []byte) (int, error) {
	n, pos, err := ULEB128(data, pos)
	if err != nil {
		return pos, fmt.Errorf("augmentation data length: %w", err)
	}
	if n > uint64(len(data)-pos) {
		return pos, fmt.Errorf("augmentation data length %d runs past the end of the CIE", n)
	}
	end := pos + int(n)
	aug := data[:end]
	ptr := p.ptr
	ptr.AddrSize = int(c.AddressSize)
	for i := 0; i < len(chars); i++ {
		switch ch := chars[i]; ch {
		case 'L':
			if pos >= end {
				return pos, errors.New("augmentation data truncated at 'L'")
			}
			c.LSDAEncoding = aug[pos]
			pos++
			if err := checkEncoding(PointerEncoding(c.LSDAEncoding)); err != nil {
				return pos, fmt.Errorf("LSDA encoding: %w", err)
			}
		case 'R':
			if pos >= end {
				return pos, errors.New("augmentation data truncated at 'R'")
			}
			c.FDEEncoding = aug[pos]
			pos++
			if err := checkEncoding(PointerEncoding(c.FDEEncoding)); err != nil || c.FDEEncoding == uint8(PEOmit) {
				return pos, fmt.Errorf("FDE pointer encoding %#x not usable", c.FDEEncoding)
			}
		case 'P':
			if pos >= end {
				return pos, errors.New("augmentation data truncated at 'P'")
			}
			enc := PointerEncoding(aug[pos])
			pos++
			if err := checkEncoding(enc); err != nil {
				return pos, fmt.Errorf("personality encoding: %w", err)
			}
			v, next, err := ptr.Decode(aug, pos, enc, 0)
			if err != nil {
				return pos, fmt.Errorf("personality pointer: %w", err)
			}
			c.Personality, pos = v, next
		case 'S':
			c.Signal = true
		case 'B':
			c.BKey = true
		case 'G':
			c.MTETagged = true
		default:
			return pos, fmt.Errorf("unknown augmentation character %q in %q", ch, c.Augmentation)
		}
	}
	return end, nil
}

// checkEncoding rejects pointer encodings with an unknown format or
// application.
func checkEncoding(e PointerEncoding) error {
	if e == PEOmit {
		return nil
	}
	switch e & 0x0f {
	case PEAbsPtr, PEULEB128, PEUData2, PEUData4, PEUData8, PESigned, PESLEB128, PESData2, PESData4, PESData8:
	default:
		return fmt.Errorf("unknown pointer encoding %#x", uint8(e))
	}
	if e&0x70 > PEAligned {
		return fmt.Errorf("unknown pointer encoding %#x", uint8(e))
	}
	return nil
}

// parseFDE decodes the FDE with header h into f (which must be zero).
func (p *parser) parseFDE(h *header, f *FDE) error {
	var cieOff uint64
	if p.eh {
		// The CIE pointer counts back from the pointer field itself.
		if h.id > uint64(h.idOff) {
			return fmt.Errorf("CIE pointer %#x points before the start of the section", h.id)
		}
		cieOff = uint64(h.idOff) - h.id
	} else {
		cieOff = h.id
		if r, ok := p.ptr.rel[uint64(h.idOff)]; ok {
			cieOff = r.value
		}
	}
	cie, err := p.lookupCIE(cieOff)
	if err != nil {
		return err
	}
	f.Offset, f.CIE, f.Format64 = h.off, cie, h.format64
	data := p.data[:h.end]
	pos := h.body
	enc := PointerEncoding(cie.FDEEncoding)
	ptr := &p.ptr
	if !p.eh || cie.AddressSize != uint8(ptr.AddrSize) {
		ptr = &PointerContext{}
		*ptr = p.ptr
		ptr.AddrSize = int(cie.AddressSize)
		if !p.eh {
			pos += int(cie.SegmentSize)
			if pos > len(data) {
				return fmt.Errorf("segment selector: %w", errTruncated)
			}
		}
	}
	if enc == PEPCRel|PESData4 && ptr.rel == nil && len(data)-pos >= 8 {
		// The usual .eh_frame encoding, decoded in line.
		f.Start = ptr.SectionAddr + uint64(pos) + uint64(int64(int32(p.u32(data[pos:]))))
		f.Size = uint64(p.u32(data[pos+4:]))
		if ptr.AddrSize == 4 {
			f.Start &= 0xffffffff
		}
		pos += 8
	} else if pos, err = p.location(f, data, pos, enc, ptr); err != nil {
		return err
	}
	if end := f.Start + f.Size; end < f.Start || ptr.AddrSize == 4 && end > 1<<32 {
		return fmt.Errorf("address range %#x..+%#x wraps around", f.Start, f.Size)
	}
	if cie.hasAugData {
		n, next, err := ULEB128(data, pos)
		if err != nil {
			return fmt.Errorf("augmentation data length: %w", err)
		}
		if n > uint64(len(data)-next) {
			return fmt.Errorf("augmentation data length %d runs past the end of the FDE", n)
		}
		end := next + int(n)
		if PointerEncoding(cie.LSDAEncoding) != PEOmit && n > 0 {
			lp := *ptr
			lp.FuncAddr = f.Start
			if f.LSDA, _, err = lp.Decode(data[:end], next, PointerEncoding(cie.LSDAEncoding), 0); err != nil {
				return fmt.Errorf("LSDA pointer: %w", err)
			}
		}
		pos = end
	}
	f.Instructions = data[pos:h.end:h.end]
	f.InstructionsOffset = uint64(pos)
	return nil
}

// location decodes an FDE's initial location and address range.
func (p *parser) location(f *FDE, data []byte, pos int, enc PointerEncoding, ptr *PointerContext) (int, error) {
	var shndx int
	var err error
	locOff := pos
	f.Start, shndx, pos, err = ptr.decode(data, pos, enc, 0)
	if err != nil {
		return pos, fmt.Errorf("initial location: %w", err)
	}
	if ptr.rel != nil {
		if _, ok := ptr.rel[uint64(locOff)]; !ok {
			return pos, fmt.Errorf("initial location at offset %#x has no relocation", locOff)
		}
		if shndx <= 0 {
			return pos, fmt.Errorf("initial location at offset %#x is relocated against a symbol not defined in a section", locOff)
		}
		f.Section = shndx
	}
	// The address range has the format of the encoding, no application,
	// and no relocation.
	rp := PointerContext{Order: ptr.Order, AddrSize: ptr.AddrSize}
	if f.Size, pos, err = rp.Decode(data, pos, enc&0x0f, 0); err != nil {
		return pos, fmt.Errorf("address range: %w", err)
	}
	return pos, nil
}
