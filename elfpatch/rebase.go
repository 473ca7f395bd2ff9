package elfpatch

import (
	"encoding/binary"
	"fmt"
)

// rebase returns a copy of the SFrame section sframe (version 2 or 3),
// which was valid at address oldAddr, adjusted to be loaded at newAddr.
//
// Function start fields are relative to the field itself (flag
// FDE_FUNC_START_PCREL) or to the section start; either way moving the
// section by d changes every field by -d. Nothing else in a section depends
// on its address. Byte order comes from the magic.
func rebase(sframe []byte, oldAddr, newAddr uint64) ([]byte, error) {
	if len(sframe) < 28 {
		return nil, fmt.Errorf("SFrame section: %d bytes, shorter than the 28-byte header", len(sframe))
	}
	var o binary.ByteOrder
	switch {
	case sframe[0] == 0xe2 && sframe[1] == 0xde:
		o = binary.LittleEndian
	case sframe[0] == 0xde && sframe[1] == 0xe2:
		o = binary.BigEndian
	default:
		return nil, fmt.Errorf("SFrame section: bad magic %#02x%02x", sframe[0], sframe[1])
	}
	ver := sframe[2]
	var esz, fieldSize uint64
	switch ver {
	case 2:
		esz, fieldSize = 20, 4
	case 3:
		esz, fieldSize = 16, 8
	default:
		return nil, fmt.Errorf("SFrame section: version %d, want 2 or 3", ver)
	}
	aux := uint64(sframe[7])
	nfdes := uint64(o.Uint32(sframe[8:]))
	fdeoff := uint64(o.Uint32(sframe[20:]))
	base := 28 + aux + fdeoff
	if base > uint64(len(sframe)) || nfdes > (uint64(len(sframe))-base)/esz {
		return nil, fmt.Errorf("SFrame section: %d FDEs at offset %#x do not fit in %d bytes", nfdes, base, len(sframe))
	}
	out := append([]byte(nil), sframe...)
	d := oldAddr - newAddr
	for i := uint64(0); i < nfdes; i++ {
		f := out[base+i*esz:]
		if fieldSize == 8 {
			o.PutUint64(f, o.Uint64(f)+d)
			continue
		}
		v := int64(int32(o.Uint32(f))) + int64(d)
		if v != int64(int32(v)) {
			return nil, fmt.Errorf("SFrame section: FDE %d start offset %#x does not fit in 32 bits at address %#x", i, v, newAddr)
		}
		o.PutUint32(f, uint32(v))
	}
	return out, nil
}
