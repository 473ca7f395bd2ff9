package emit

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Dump writes the text objdump --sframe (GNU binutils 2.46+, libsframe
// dump_sframe) prints for the section, from the line "Contents of the
// SFrame section NAME:" to the end, byte for byte: column padding and
// trailing blanks included. sectionAddr is the section's address (0 in a
// relocatable object, whose FDE start fields must already hold their
// relocated values). It reads the functions as Decode reads them from the
// section's bytes (Section.Functions), so a section in memory and the
// section decoded from its bytes print the same.
func Dump(w io.Writer, sec *Section, sectionAddr uint64, sectionName string) error {
	fdes, err := sec.Functions()
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Contents of the SFrame section %s:", sectionName)
	dumpHeader(bw, sec, fdes)
	if v := sec.Header.Version; v == Version2 || v == Version3 {
		fmt.Fprintf(bw, "\n  Function Index :\n")
		for i := range fdes {
			dumpFunc(bw, sec, &fdes[i], i, sectionAddr)
			bw.WriteString("\n")
		}
	} else {
		fmt.Fprintf(bw, "\n No further information can be displayed.  SFrame version not supported\n")
	}
	return bw.Flush()
}

func dumpHeader(w *bufio.Writer, sec *Section, fdes []FDE) {
	h := &sec.Header
	fmt.Fprintf(w, "\n  Header :\n\n")
	ver := "(null)"
	if names := []string{"NULL", "SFRAME_VERSION_1", "SFRAME_VERSION_2", "SFRAME_VERSION_3"}; int(h.Version) < len(names) {
		ver = names[h.Version]
	}
	fmt.Fprintf(w, "    Version: %s\n", ver)

	prefix := "Flags: "
	flags := h.Flags
	if flags == 0 {
		fmt.Fprintf(w, "%11sNONE\n", prefix)
	} else {
		printFlag := func(bit Flags, name string) {
			if flags&bit == 0 {
				return
			}
			flags &^= bit
			comma := ""
			if flags != 0 {
				comma = ","
			}
			fmt.Fprintf(w, "%11s%s%s\n", prefix, name, comma)
			prefix = " "
		}
		printFlag(FlagFDESorted, "SFRAME_F_FDE_SORTED")
		if h.Version == Version2 {
			printFlag(FlagFramePointer, "SFRAME_F_FRAME_POINTER")
		}
		printFlag(FlagFDEFuncStartPCRel, "SFRAME_F_FDE_FUNC_START_PCREL")
		if flags != 0 {
			fmt.Fprintf(w, "%11s%d\n", prefix, flags)
		}
	}
	if h.CFAFixedFPOffset != 0 {
		fmt.Fprintf(w, "    CFA fixed FP offset: %d\n", h.CFAFixedFPOffset)
	}
	if h.CFAFixedRAOffset != 0 {
		fmt.Fprintf(w, "    CFA fixed RA offset: %d\n", h.CFAFixedRAOffset)
	}
	numFREs := 0
	for i := range fdes {
		numFREs += len(fdes[i].FREs)
	}
	fmt.Fprintf(w, "    Num FDEs: %d\n", int32(len(fdes)))
	fmt.Fprintf(w, "    Num FREs: %d\n", int32(numFREs))
}

func dumpFunc(w *bufio.Writer, sec *Section, f *FDE, i int, sectionAddr uint64) {
	pc := sec.FuncStart(i, sectionAddr)
	attrs := ""
	if f.Signal() {
		attrs += "S"
	}
	flex := sec.Header.Version == Version3 && f.Type() == FDEFlex
	if flex {
		attrs += "F"
	}
	fmt.Fprintf(w, "\n    func idx [%d]: pc = 0x%x, size = %d bytes", int32(i), pc, int32(f.Size))
	if attrs != "" {
		fmt.Fprintf(w, ", attr = \"%s\"", attrs)
	}
	if sec.Header.ABI.IsAArch64() && f.PAuthKeyB() {
		fmt.Fprintf(w, ", pauth = B key")
	}
	mask := f.PCType() == PCMask
	marker := "   "
	if mask {
		marker = "[m]"
	}
	fmt.Fprintf(w, "\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC", marker, "CFA", "FP", "RA")
	for j := range f.FREs {
		e := &f.FREs[j]
		frePC := pc + uint64(e.StartAddr)
		if mask {
			frePC = uint64(e.StartAddr)
		}
		w.WriteString("\n    ")
		writeHex16(w, frePC)
		if e.RAUndefined() {
			w.WriteString("  RA undefined")
			continue
		}
		var cfa, fp, ra string
		if flex {
			cfa, fp, ra = flexColumns(sec, e)
		} else {
			cfa, fp, ra = defaultColumns(sec, e)
		}
		w.WriteString("  ")
		writePadded(w, cfa, 10)
		writePadded(w, fp, 10)
		if e.MangledRA() {
			ra += "[s]"
		} else {
			ra += "   "
		}
		writePadded(w, ra, 13)
	}
}

// word is data word i of e, and whether it is present.
func word(e *FRE, i int) (int32, bool) {
	if i < len(e.Words) {
		return e.Words[i], true
	}
	return 0, false
}

// sframeErr is what libsframe's getters return for a missing word
// (SFRAME_ERR).
const sframeErr = -1

// cfaOffset is libsframe's sframe_fre_get_cfa_offset: word idx, decoded on
// s390x.
func cfaOffset(sec *Section, e *FRE, idx int) (int32, bool) {
	v, ok := word(e, idx)
	if !ok {
		return sframeErr, false
	}
	if sec.Header.ABI == ABIS390XBigEndian {
		v = S390XCFAOffsetDecode(v)
	}
	return v, true
}

// s390xRegnum reports whether a version 2 s390x FP/RA offset encodes a
// register number (odd values), and the register.
func s390xRegnum(sec *Section, v int32) (int32, bool) {
	if sec.Header.ABI == ABIS390XBigEndian && sec.Header.Version == Version2 && v&1 != 0 {
		return v >> 1, true
	}
	return 0, false
}

// defaultColumns formats a default FDE's FRE (dump_sframe_func_fres_simple).
func defaultColumns(sec *Section, e *FRE) (cfa, fp, ra string) {
	h := &sec.Header
	base := "fp"
	if e.BaseRegSP() {
		base = "sp"
	}
	c, _ := cfaOffset(sec, e, CFAWordIndex)
	cfa = base + "+" + strconv.Itoa(int(c))

	fpIdx := FPWordIndex
	if h.CFAFixedRAOffset != 0 {
		fpIdx = RAWordIndex
	}
	fpv, fpOK := word(e, fpIdx)
	if h.CFAFixedFPOffset != 0 {
		fpv, fpOK = int32(h.CFAFixedFPOffset), true
	}
	switch r, isReg := s390xRegnum(sec, fpv); {
	case !fpOK:
		fp = "u"
	case isReg:
		fp = "r" + strconv.Itoa(int(r))
	default:
		fp = "c" + signed(fpv)
	}

	rav, raOK := word(e, RAWordIndex)
	switch r, isReg := s390xRegnum(sec, rav); {
	case h.CFAFixedRAOffset != 0:
		ra = "f"
	case raOK && rav == RAOffsetInvalid:
		ra = "U"
	case raOK && isReg:
		ra = "r" + strconv.Itoa(int(r))
	case raOK:
		ra = "c" + signed(rav)
	default:
		ra = "u"
	}
	return cfa, fp, ra
}

// flexColumns formats a flex FDE's FRE (dump_sframe_func_fres_flex).
func flexColumns(sec *Section, e *FRE) (cfa, fp, ra string) {
	h := &sec.Header
	uword := func(i int) (uint32, bool) {
		if i < len(e.Words) {
			return e.UWord(i), true
		}
		return 0xffffffff, false // SFRAME_ERR read as unsigned
	}
	cfaCtl, _ := uword(0)
	cfaOff, _ := cfaOffset(sec, e, 1)
	cfa = flexRule(h.ABI, cfaCtl, cfaOff)

	// RA: control word 2, offset word 3 (or the fixed RA offset).
	raCtl, raCtlOK := uword(2)
	raOff, raOffOK := word(e, 3)
	if !raOffOK {
		raOff = sframeErr
		if h.CFAFixedRAOffset != 0 {
			raOff = int32(h.CFAFixedRAOffset)
		}
	}

	// FP: control word 4, or 3 after a padding RA word; offset word 5 or 4.
	fpIdx := 4
	if raCtlOK && raCtl == RAOffsetInvalid {
		fpIdx = 3
	}
	fpCtl, fpCtlOK := uword(fpIdx)
	offIdx := 5
	if raCtlOK && raCtl == RAOffsetInvalid {
		offIdx = 4
	}
	fpOff, fpOffOK := word(e, offIdx)
	if !fpOffOK && h.CFAFixedFPOffset != 0 {
		fpOff, fpOffOK = int32(h.CFAFixedFPOffset), true
	}
	if fpCtlOK && fpOffOK {
		fp = flexRule(h.ABI, fpCtl, fpOff)
	} else {
		fp = "u"
	}

	switch {
	case !raCtlOK && h.CFAFixedRAOffset != 0:
		ra = "f"
	case !raCtlOK:
		ra = "u"
	case raCtl == RAOffsetInvalid:
		ra = "U"
	default:
		ra = flexRule(h.ABI, raCtl, raOff)
	}
	return cfa, fp, ra
}

// flexRule formats one flex rule as sframe_format_fre_disp does: "c" for a
// CFA-relative rule, else the register's name; in parentheses when
// dereferenced (only decoded for register rules).
func flexRule(abi ABI, ctl uint32, off int32) string {
	reg, deref, regP := DecodeFlexControlWord(ctl)
	name := "c"
	if regP {
		name = RegName(abi, reg)
	} else {
		deref = false
	}
	if deref {
		return "(" + name + signed(off) + ")"
	}
	return name + signed(off)
}

// RegName is the name objdump gives DWARF register reg of abi in flex FDE
// rules: "sp" and "fp" for the ABI's stack and frame pointers (AMD64 7/6,
// AArch64 31/29, s390x 15/11), else "r" and the number.
func RegName(abi ABI, reg uint32) string {
	var sp, fp uint32
	switch {
	case abi == ABIAMD64LittleEndian:
		sp, fp = 7, 6
	case abi.IsAArch64():
		sp, fp = 31, 29
	case abi == ABIS390XBigEndian:
		sp, fp = 15, 11
	default:
		return "r" + strconv.FormatUint(uint64(reg), 10)
	}
	switch reg {
	case sp:
		return "sp"
	case fp:
		return "fp"
	}
	return "r" + strconv.FormatUint(uint64(reg), 10)
}

// signed formats v as C's "%+d" does.
func signed(v int32) string {
	if v >= 0 {
		return "+" + strconv.Itoa(int(v))
	}
	return strconv.Itoa(int(v))
}

// writeHex16 writes v as C's "%016" PRIx64 does.
func writeHex16(w *bufio.Writer, v uint64) {
	var buf [16]byte
	for i := 15; i >= 0; i-- {
		buf[i] = "0123456789abcdef"[v&0xf]
		v >>= 4
	}
	w.Write(buf[:])
}

// writePadded writes s left-aligned in width columns, as C's "%-Ns" does.
func writePadded(w *bufio.Writer, s string, width int) {
	w.WriteString(s)
	for i := len(s); i < width; i++ {
		w.WriteByte(' ')
	}
}
