package lower

import (
	"fmt"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// PLTVariant is the procedure linkage table layout GNU ld chose for an
// x86-64 output (lazy binding or not, IBT-enabled or not). s390x has one
// layout; AArch64 ld makes no PLT SFrame.
type PLTVariant uint8

// x86-64 PLT layouts (bfd/elf64-x86-64.c elf_x86_64_sframe_*plt).
const (
	PLTLazy       PLTVariant = iota // lazy binding: PLT0 then 16-byte entries
	PLTLazyIBT                      // lazy binding with IBT: .plt plus .plt.sec
	PLTNonLazy                      // -z now without IBT: no PLT0
	PLTNonLazyIBT                   // -z now with IBT
)

// PLTKind names a linker PLT section.
type PLTKind uint8

// PLT sections that get SFrame FDEs, in the order ld adds them.
const (
	PLTMain PLTKind = iota // .plt
	PLTSec                 // .plt.sec
	PLTGot                 // .plt.got
)

var pltKindNames = [...]string{PLTMain: ".plt", PLTSec: ".plt.sec", PLTGot: ".plt.got"}

// String returns the section name.
func (k PLTKind) String() string { return enumName(pltKindNames[:], uint8(k), "PLTKind") }

// PLTSection is one PLT section of a linked file.
type PLTSection struct {
	Kind PLTKind
	Addr uint64
	Size uint64
}

// PLTFDE is one SFrame FDE ld synthesizes for a PLT: the FDE (StartOffset
// and FREOffset unset) and the absolute address of the code it covers.
type PLTFDE struct {
	FDE   emit.FDE
	Start uint64
}

// pltFRE is one entry of ld's fixed FRE tables: SP-based CFA, one
// one-byte data word (info 0x03); and of the AArch64 PLT FREs, which may
// add the RA's offset from the CFA as a second word.
type pltFRE struct {
	start uint32
	cfa   int32 // stored value (s390x: encoded)
	ra    int32 // AArch64: RA at CFA+ra; 0: no RA word (RA in x30)
}

// pltLayout is ld's struct elf_x86_sframe_plt (and the s390x equivalent).
type pltLayout struct {
	plt0Size  uint64 // 0: no PLT0
	plt0FREs  []pltFRE
	pltnSize  uint64
	pltnFREs  []pltFRE
	secSize   uint64 // 0: no .plt.sec FDE
	secFREs   []pltFRE
	gotSize   uint64
	gotFREs   []pltFRE
	allowSecs []PLTKind
	plt0Rep   uint8 // rep_size of the PLT0 FDE (ld 2.44: 16)
}

var (
	x86PLT0    = []pltFRE{{start: 0, cfa: 16}, {start: 6, cfa: 24}}
	x86PLTn    = []pltFRE{{start: 0, cfa: 8}, {start: 11, cfa: 16}}
	x86IBTPLTn = []pltFRE{{start: 0, cfa: 8}, {start: 9, cfa: 16}}
	x86SecPLTn = []pltFRE{{start: 0, cfa: 8}}
	x86PLTGot  = []pltFRE{{start: 0, cfa: 16}} // ld's value; .eh_frame says rsp+8
	// x86PLTGotCFI is what a .plt.got entry (a bare "jmp *GOT(%rip)",
	// reached by call) means, and what ld's own .eh_frame says.
	x86PLTGotCFI = []pltFRE{{start: 0, cfa: 8}}
	s390xPLTFRE  = []pltFRE{{start: 0, cfa: int32(emit.S390XCFAOffsetEncode(160))}}
)

func pltLayoutFor(t Target, v PLTVariant, opt Options) (pltLayout, error) {
	switch t.Arch {
	case AMD64:
		got := x86PLTGotCFI
		if opt.GasCompat {
			got = x86PLTGot
		}
		switch v {
		case PLTLazy:
			return pltLayout{16, x86PLT0, 16, x86PLTn, 8, x86SecPLTn, 8, got, nil, 0}, nil
		case PLTLazyIBT:
			return pltLayout{16, x86PLT0, 16, x86IBTPLTn, 16, x86SecPLTn, 16, got, nil, 0}, nil
		case PLTNonLazy:
			return pltLayout{0, nil, 16, x86SecPLTn, 0, nil, 8, got, nil, 0}, nil
		case PLTNonLazyIBT:
			return pltLayout{0, nil, 16, x86SecPLTn, 0, nil, 16, got, nil, 0}, nil
		}
		return pltLayout{}, fmt.Errorf("unknown x86-64 PLT variant %d", v)
	case S390X:
		return pltLayout{32, s390xPLTFRE, 32, s390xPLTFRE, 0, nil, 0, nil, []PLTKind{PLTMain}, 0}, nil
	}
	return pltLayout{}, fmt.Errorf("GNU ld makes no PLT SFrame for %v", t)
}

// pltWith returns the SFrame FDEs GNU ld adds for the PLT sections of a
// linked file (bfd/elfxx-x86.c _bfd_x86_elf_create_sframe_plt,
// bfd/elf64-s390.c), in the order ld merges them: .plt (PLT0, then the
// entries as one PCMASK FDE), .plt.sec, .plt.got. Each section's FRE type
// comes from its whole size; a PCMASK FDE is made only if the section
// holds at least one entry. variant is ignored on s390x, which only has
// .plt. In GasCompat mode these are ld's tables exactly; in the default
// (correct) mode the x86-64 .plt.got FRE says sp+8, what its entries (a
// bare "jmp *GOT(%rip)" reached by call) and ld's own .eh_frame mean,
// instead of ld's sp+16.
func pltWith(t Target, variant PLTVariant, secs []PLTSection, opt Options) ([]PLTFDE, error) {
	lay, err := pltLayoutFor(t, variant, opt)
	if err != nil {
		return nil, err
	}
	if opt.GasCompat && opt.Version == emit.Version2 && opt.V2Layout == V2Binutils244 {
		// ld 2.44 writes the PLT0 FDE (PCINC, where the size means
		// nothing) with a rep_size of 16; later releases with 0.
		lay.plt0Rep = 16
	}
	var out []PLTFDE
	for _, kind := range []PLTKind{PLTMain, PLTSec, PLTGot} {
		for _, s := range secs {
			if s.Kind != kind {
				continue
			}
			if lay.allowSecs != nil && kind != PLTMain {
				return nil, fmt.Errorf("%v has no SFrame for %v", t, kind)
			}
			out = lay.appendFDEs(out, s)
		}
	}
	return out, nil
}

func (lay *pltLayout) appendFDEs(out []PLTFDE, s PLTSection) []PLTFDE {
	ft := emit.FRETypeFor(uint32(min(s.Size, 0xffffffff)))
	var head uint64
	var entry uint64
	var fres []pltFRE
	switch s.Kind {
	case PLTMain:
		head, entry, fres = lay.plt0Size, lay.pltnSize, lay.pltnFREs
		if head != 0 && s.Size >= head {
			out = append(out, PLTFDE{Start: s.Addr, FDE: pltFDE(head, emit.PCInc, lay.plt0Rep, ft, lay.plt0FREs)})
		}
	case PLTSec:
		entry, fres = lay.secSize, lay.secFREs
	case PLTGot:
		entry, fres = lay.gotSize, lay.gotFREs
	}
	if entry == 0 || s.Size < head || (s.Size-head)/entry == 0 {
		return out
	}
	return append(out, PLTFDE{Start: s.Addr + head, FDE: pltFDE(s.Size-head, emit.PCMask, uint8(entry), ft, fres)})
}

func pltFDE(size uint64, pc emit.PCType, rep uint8, ft emit.FREType, tab []pltFRE) emit.FDE {
	f := emit.FDE{
		Size:    uint32(size),
		Info:    emit.FuncInfo(pc, ft, false, false),
		RepSize: rep,
		FREs:    make([]emit.FRE, len(tab)),
	}
	for i, e := range tab {
		words := []int32{e.cfa}
		if e.ra != 0 {
			words = append(words, e.ra)
		}
		f.FREs[i] = emit.FRE{
			StartAddr: e.start,
			Info:      emit.FREInfo(true, len(words), emit.DataWord1B, false),
			Words:     words,
		}
	}
	return f
}

// appendPLT adds PLT FDEs after the functions of a linked file's result,
// as ld merges them after all input sections: their FRE data comes last.
// Call Place afterwards. The error is AppendFDE's.
func (r *Result) appendPLT(plt []PLTFDE) error {
	for _, p := range plt {
		if err := r.Section.AppendFDE(p.FDE); err != nil {
			return fmt.Errorf("PLT FDE at %#x: %w", p.Start, err)
		}
		r.Starts = append(r.Starts, p.Start)
		if r.Sources != nil {
			r.Sources = append(r.Sources, (*cfi.FDE)(nil))
		}
	}
	return nil
}
