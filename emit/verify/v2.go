package verify

import "github.com/sframe-gen/sframe-gen/emit"

// checkV2Header applies the rules of version 2's readers to a version 2
// header and FDEs: binutils 2.44's libsframe refuses the
// FDE_FUNC_START_PCREL flag, binutils 2.45's reads it and the 2025 series
// of the Linux kernel's unwinder requires it (with FDE_SORTED, checked for
// every version). FDE info bits 6 and 7 are unused in version 2 (version 3's
// signal bit is bit 7): a reader ignores them, so a function marked there
// would be unwound as an ordinary one.
func (c *checker) checkV2Header() {
	h := &c.s.Header
	if h.Flags&emit.FlagFDEFuncStartPCRel == 0 {
		c.note(-1, "version 2 without SFRAME_F_FDE_FUNC_START_PCREL: the binutils 2.41-2.44 layout (the 2025 Linux kernel series requires the flag)")
	} else {
		c.note(-1, "version 2 with SFRAME_F_FDE_FUNC_START_PCREL: the binutils 2.45 layout (binutils 2.44 and older refuse the flag)")
	}
	if h.Flags&emit.FlagFramePointer != 0 {
		c.note(-1, "version 2 flag SFRAME_F_FRAME_POINTER set (no reader uses it)")
	}
	for i := range c.fdes {
		if info := c.fdes[i].Info; info&0xc0 != 0 {
			c.problem(KindFormat, i, "FDE info %#02x sets bits 6-7, unused in version 2 (version 3's signal bit is lost)", info)
		}
	}
}
