package lower

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/sframe-gen/sframe-gen/emit"
)

// Arch is a processor architecture SFrame supports.
type Arch uint8

// Architectures.
const (
	AMD64 Arch = iota + 1
	AArch64
	S390X
)

var archNames = [...]string{AMD64: "x86_64", AArch64: "aarch64", S390X: "s390x"}

// String returns the architecture name as GNU tools spell it.
func (a Arch) String() string { return enumName(archNames[:], uint8(a), "Arch") }

// enumName returns the name of value v of an enumeration in names, or
// typ(v) when it has none.
func enumName(names []string, v uint8, typ string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// Target is the ABI an SFrame section is made for: the architecture, its byte
// order and whether the input is a relocatable object (ET_REL), which decides
// how function start addresses are written.
type Target struct {
	Arch      Arch
	BigEndian bool
	// Relocatable is true for ET_REL objects: FDE start fields stay 0 and
	// each gets a PC-relative relocation, as gas writes them.
	Relocatable bool
}

// TargetForELF returns the Target of an ELF file from its class, machine,
// byte order and type. Only the 64-bit ABIs gas supports are accepted:
// x86-64 (not x32), AArch64 LP64 in either byte order, and 64-bit s390x.
func TargetForELF(f *elf.File) (Target, error) {
	t := Target{Relocatable: f.Type == elf.ET_REL, BigEndian: f.Data == elf.ELFDATA2MSB}
	if f.Class != elf.ELFCLASS64 {
		return Target{}, fmt.Errorf("%v %v: SFrame is only defined for 64-bit ABIs", f.Class, f.Machine)
	}
	switch f.Machine {
	case elf.EM_X86_64:
		t.Arch = AMD64
	case elf.EM_AARCH64:
		t.Arch = AArch64
	case elf.EM_S390:
		t.Arch = S390X
	default:
		return Target{}, fmt.Errorf("machine %v has no SFrame ABI", f.Machine)
	}
	if err := t.check(); err != nil {
		return Target{}, err
	}
	return t, nil
}

// TargetByName returns the Target for an architecture name: "x86_64" or
// "amd64"; "aarch64" or "arm64" (little-endian), "aarch64_be" or "arm64be";
// "s390x". The result describes a linked file (Relocatable false).
func TargetByName(name string) (Target, error) {
	switch strings.ToLower(name) {
	case "x86_64", "x86-64", "amd64":
		return Target{Arch: AMD64}, nil
	case "aarch64", "arm64":
		return Target{Arch: AArch64}, nil
	case "aarch64_be", "aarch64be", "arm64be", "arm64_be":
		return Target{Arch: AArch64, BigEndian: true}, nil
	case "s390x":
		return Target{Arch: S390X, BigEndian: true}, nil
	}
	return Target{}, fmt.Errorf("unknown architecture %q (want x86_64, aarch64, aarch64_be or s390x)", name)
}

func (t Target) check() error {
	switch {
	case t.Arch == AMD64 && t.BigEndian:
		return fmt.Errorf("big-endian x86-64 has no SFrame ABI")
	case t.Arch == S390X && !t.BigEndian:
		return fmt.Errorf("little-endian s390x has no SFrame ABI")
	case t.Arch < AMD64 || t.Arch > S390X:
		return fmt.Errorf("unknown architecture %v", t.Arch)
	}
	return nil
}

// String returns e.g. "x86_64" or "aarch64_be".
func (t Target) String() string {
	if t.Arch == AArch64 && t.BigEndian {
		return "aarch64_be"
	}
	return t.Arch.String()
}

// ABI returns the sfh_abi_arch identifier.
func (t Target) ABI() emit.ABI {
	switch t.Arch {
	case AMD64:
		return emit.ABIAMD64LittleEndian
	case AArch64:
		if t.BigEndian {
			return emit.ABIAArch64BigEndian
		}
		return emit.ABIAArch64LittleEndian
	case S390X:
		return emit.ABIS390XBigEndian
	}
	return 0
}

// ByteOrder returns the target byte order.
func (t Target) ByteOrder() binary.ByteOrder {
	if t.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Header returns the SFrame header gas writes for the target: version 3,
// flag FDE_FUNC_START_PCREL, no fixed FP offset, a fixed RA offset of -8 on
// AMD64 (RA is not tracked there) and none elsewhere.
func (t Target) Header() emit.Header {
	return emit.Header{
		Version:          emit.Version3,
		Flags:            emit.FlagFDEFuncStartPCRel,
		ABI:              t.ABI(),
		CFAFixedFPOffset: 0,
		CFAFixedRAOffset: t.regs().fixedRA,
	}
}

// RelocType returns the ELF relocation type gas uses for the 64-bit
// PC-relative FDE start field: R_X86_64_PC64, R_AARCH64_PREL64 or R_390_PC64.
func (t Target) RelocType() uint32 {
	return t.reloc(elf.R_X86_64_PC64, elf.R_AARCH64_PREL64, elf.R_390_PC64)
}

// reloc returns the one of the relocation types given for each
// architecture that is t's, or 0 for another architecture.
func (t Target) reloc(amd64 elf.R_X86_64, aarch64 elf.R_AARCH64, s390x elf.R_390) uint32 {
	switch t.Arch {
	case AMD64:
		return uint32(amd64)
	case AArch64:
		return uint32(aarch64)
	case S390X:
		return uint32(s390x)
	}
	return 0
}

// regs describes what gas's per-target hooks say about an ABI.
type regs struct {
	sp, fp, ra uint64 // DWARF numbers of SFRAME_CFA_{SP,FP,RA}_REG
	raTracking bool   // sframe_ra_tracking_p
	flex       bool   // sframe_support_flex_fde_p
	fixedRA    int8   // sframe_cfa_ra_offset
	spValOff   int64  // the val_offset rule of SP that needs no FRE data
	amd64      bool
	s390x      bool
	aarch64    bool
}

func (t Target) regs() regs {
	switch t.Arch {
	case AMD64:
		return regs{sp: 7, fp: 6, ra: 16, flex: true, fixedRA: -8, amd64: true}
	case AArch64:
		return regs{sp: 31, fp: 29, ra: 30, raTracking: true, aarch64: true}
	case S390X:
		return regs{sp: 15, fp: 11, ra: 14, raTracking: true, flex: true, spValOff: -160, s390x: true}
	}
	return regs{}
}

// name returns gas's sframe_register_name: "SP", "FP", "RA" or "(null)".
func (r *regs) name(reg uint64) string {
	switch reg {
	case r.sp:
		return "SP"
	case r.fp:
		return "FP"
	case r.ra:
		return "RA"
	}
	return "(null)"
}
