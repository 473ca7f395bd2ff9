package emit

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
)

// DumpJSON writes the content of Dump as one JSON object (schema in
// docs/dump.md): the header fields, then per function its start pc, size,
// attributes, types, rep_size and FREs, each FRE with its pc, the CFA rule
// and the FP and RA rules (null when absent), the mangled-RA and
// RA-undefined bits, and the raw info byte and data words.
func DumpJSON(w io.Writer, sec *Section, sectionAddr uint64, sectionName string) error {
	return DumpJSONFile(w, "", sec, sectionAddr, sectionName)
}

// DumpJSONFile is DumpJSON with a first member "file" naming where the
// section comes from (a static archive's member: "ARCHIVE(MEMBER)"); an
// empty file leaves it out, as DumpJSON does.
func DumpJSONFile(w io.Writer, file string, sec *Section, sectionAddr uint64, sectionName string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	js, err := jsonOf(sec, sectionAddr, sectionName)
	if err != nil {
		return err
	}
	js.File = file
	return enc.Encode(js)
}

type jsonSection struct {
	File             string     `json:"file,omitempty"`
	Section          string     `json:"section"`
	Version          uint8      `json:"version"`
	Flags            []string   `json:"flags"`
	ABI              string     `json:"abi"`
	CFAFixedFPOffset int8       `json:"cfa_fixed_fp_offset"`
	CFAFixedRAOffset int8       `json:"cfa_fixed_ra_offset"`
	AuxHeaderLen     int        `json:"auxhdr_len"`
	NumFDEs          int        `json:"num_fdes"`
	NumFREs          int        `json:"num_fres"`
	Functions        []jsonFunc `json:"functions"`
}

type jsonFunc struct {
	Index      int       `json:"index"`
	PC         uint64    `json:"pc"`
	Size       uint32    `json:"size"`
	Attributes string    `json:"attributes"`
	Signal     bool      `json:"signal"`
	Type       string    `json:"type"`
	PCType     string    `json:"pc_type"`
	FREType    string    `json:"fre_type"`
	PAuthKey   string    `json:"pauth_key,omitempty"`
	RepSize    uint8     `json:"rep_size"`
	FREs       []jsonFRE `json:"fres"`
}

type jsonFRE struct {
	PC          uint64    `json:"pc"`
	Start       uint32    `json:"start"`
	RAUndefined bool      `json:"ra_undefined"`
	CFA         *jsonRule `json:"cfa"`
	FP          *jsonRule `json:"fp"`
	RA          *jsonRule `json:"ra"`
	Mangled     bool      `json:"mangled"`
	Info        uint8     `json:"info"`
	Words       []int32   `json:"words"`
}

// jsonRule is one recovery rule. Kind "register": the value is reg+offset,
// or the word at reg+offset when deref. Kind "cfa": the same with the CFA
// as base (deref true: saved on the stack at CFA+offset). Kind "fixed": the
// header's fixed offset from the CFA, where the value is saved. Kind
// "padding": an RA padding word (objdump "U": no RA rule).
type jsonRule struct {
	Kind   string `json:"kind"`
	Reg    string `json:"reg,omitempty"`
	Offset int32  `json:"offset"`
	Deref  bool   `json:"deref"`
}

// jsonOf is the JSON form of sec (its functions read as Dump reads them).
func jsonOf(sec *Section, sectionAddr uint64, name string) (*jsonSection, error) {
	fdes, err := sec.Functions()
	if err != nil {
		return nil, err
	}
	h := &sec.Header
	js := &jsonSection{
		Section:          name,
		Version:          h.Version,
		Flags:            h.Flags.names(),
		ABI:              h.ABI.String(),
		CFAFixedFPOffset: h.CFAFixedFPOffset,
		CFAFixedRAOffset: h.CFAFixedRAOffset,
		AuxHeaderLen:     len(h.AuxHeader),
		NumFDEs:          len(fdes),
		Functions:        make([]jsonFunc, len(fdes)),
	}
	for i := range fdes {
		f := &fdes[i]
		js.NumFREs += len(f.FREs)
		flex := h.Version == Version3 && f.Type() == FDEFlex
		jf := jsonFunc{
			Index:   i,
			PC:      sec.FuncStart(i, sectionAddr),
			Size:    f.Size,
			Signal:  f.Signal(),
			Type:    "default",
			PCType:  "inc",
			FREType: fmt.Sprintf("addr%d", f.FREType().AddrSize()),
			RepSize: f.RepSize,
			FREs:    make([]jsonFRE, len(f.FREs)),
		}
		if f.Signal() {
			jf.Attributes += "S"
		}
		if flex {
			jf.Attributes += "F"
			jf.Type = "flex"
		} else if f.Type() != FDEDefault {
			jf.Type = f.Type().String()
		}
		if f.PCType() == PCMask {
			jf.PCType = "mask"
		}
		if h.ABI.IsAArch64() {
			jf.PAuthKey = "A"
			if f.PAuthKeyB() {
				jf.PAuthKey = "B"
			}
		}
		for j := range f.FREs {
			e := &f.FREs[j]
			je := jsonFRE{
				PC:          jf.PC + uint64(e.StartAddr),
				Start:       e.StartAddr,
				RAUndefined: e.RAUndefined(),
				Mangled:     e.MangledRA(),
				Info:        e.Info,
				Words:       e.Words,
			}
			if f.PCType() == PCMask {
				je.PC = uint64(e.StartAddr)
			}
			if je.Words == nil {
				je.Words = []int32{}
			}
			if !e.RAUndefined() {
				if flex {
					je.CFA, je.FP, je.RA = flexRules(sec, e)
				} else {
					je.CFA, je.FP, je.RA = defaultRules(sec, e)
				}
			}
			jf.FREs[j] = je
		}
		js.Functions[i] = jf
	}
	return js, nil
}

// savedRule is the rule of a default FDE's FP or RA word v.
func savedRule(sec *Section, v int32) *jsonRule {
	if r, isReg := s390xRegnum(sec, v); isReg {
		return &jsonRule{Kind: "register", Reg: RegName(sec.Header.ABI, uint32(r))}
	}
	return &jsonRule{Kind: "cfa", Offset: v, Deref: true}
}

func defaultRules(sec *Section, e *FRE) (cfa, fp, ra *jsonRule) {
	h := &sec.Header
	base := "fp"
	if e.BaseRegSP() {
		base = "sp"
	}
	c, _ := cfaOffset(sec, e, CFAWordIndex)
	cfa = &jsonRule{Kind: "register", Reg: base, Offset: c}
	fpIdx := FPWordIndex
	if h.CFAFixedRAOffset != 0 {
		fpIdx = RAWordIndex
	}
	if h.CFAFixedFPOffset != 0 {
		fp = &jsonRule{Kind: "fixed", Offset: int32(h.CFAFixedFPOffset), Deref: true}
	} else if v, ok := word(e, fpIdx); ok {
		fp = savedRule(sec, v)
	}
	if h.CFAFixedRAOffset != 0 {
		ra = &jsonRule{Kind: "fixed", Offset: int32(h.CFAFixedRAOffset), Deref: true}
	} else if v, ok := word(e, RAWordIndex); ok {
		if v == RAOffsetInvalid {
			ra = &jsonRule{Kind: "padding"}
		} else {
			ra = savedRule(sec, v)
		}
	}
	return cfa, fp, ra
}

// flexRuleJSON is the rule of control word ctl and offset off.
func flexRuleJSON(abi ABI, ctl uint32, off int32) *jsonRule {
	reg, deref, regP := DecodeFlexControlWord(ctl)
	if !regP {
		return &jsonRule{Kind: "cfa", Offset: off, Deref: deref}
	}
	return &jsonRule{Kind: "register", Reg: RegName(abi, reg), Offset: off, Deref: deref}
}

func flexRules(sec *Section, e *FRE) (cfa, fp, ra *jsonRule) {
	h := &sec.Header
	n := len(e.Words)
	if n >= 2 {
		off, _ := cfaOffset(sec, e, 1)
		cfa = flexRuleJSON(h.ABI, e.UWord(0), off)
	}
	fpIdx := 4
	switch {
	case n >= 4:
		if e.UWord(2) == RAOffsetInvalid {
			ra = &jsonRule{Kind: "padding"}
			fpIdx = 3
		} else {
			ra = flexRuleJSON(h.ABI, e.UWord(2), e.Words[3])
		}
	case n == 3 && e.UWord(2) == RAOffsetInvalid:
		ra = &jsonRule{Kind: "padding"}
	case h.CFAFixedRAOffset != 0:
		ra = &jsonRule{Kind: "fixed", Offset: int32(h.CFAFixedRAOffset), Deref: true}
	}
	if n >= fpIdx+2 {
		fp = flexRuleJSON(h.ABI, e.UWord(fpIdx), e.Words[fpIdx+1])
	} else if h.CFAFixedFPOffset != 0 {
		fp = &jsonRule{Kind: "fixed", Offset: int32(h.CFAFixedFPOffset), Deref: true}
	}
	return cfa, fp, ra
}

// DumpELF writes the SFrame section of f (ReadELFSection) as Dump does,
// or with asJSON as DumpJSON does, as "sframe-gen dump" prints it: at
// address 0 in a relocatable object. A file named by name (a member of an
// archive, or one of several files; "" names none) is named after a blank
// line before the text, or by a "file" member (DumpJSONFile).
func DumpELF(w io.Writer, f *elf.File, name string, asJSON bool) error {
	sec, data, err := ReadELFSection(f)
	if err != nil {
		return err
	}
	s, err := Decode(data)
	if err != nil {
		return fmt.Errorf("section %s: %w", sec.Name, err)
	}
	addr := sec.Addr
	if f.Type == elf.ET_REL {
		addr = 0
	}
	if asJSON {
		return DumpJSONFile(w, name, s, addr, sec.Name)
	}
	if name != "" {
		if _, err := fmt.Fprintf(w, "\n%s:\n", name); err != nil {
			return err
		}
	}
	return Dump(w, s, addr, sec.Name)
}
