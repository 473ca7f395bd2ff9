package verify

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// mutateSection writes a copy of src into dir whose .sframe was decoded,
// changed by fn and encoded again in place (the encoding must keep the
// section's size). fn gets the section and its address.
func mutateSection(t *testing.T, src, dir string, fn func(s *draft, addr uint64)) string {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	sec := emit.FindSection(f)
	if sec == nil {
		t.Fatalf("%s: no .sframe", src)
	}
	data := raw[sec.Offset : sec.Offset+sec.Size]
	s := decodeDraft(t, data)
	addr := sec.Addr
	if f.Type == elf.ET_REL {
		addr = 0
	}
	fn(s, addr)
	out, err := s.build(t).Encode()
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if len(out) != len(data) {
		t.Fatalf("mutation changed the section size from %d to %d", len(data), len(out))
	}
	copy(data, out)
	return writeCopy(t, dir, src, raw)
}

// draft is a decoded section whose functions a test changes: FDEs holds
// them with their FREs, in index order; the start fields are the
// Section's (FuncStart, SetFuncStart).
type draft struct {
	*emit.Section
	FDEs []emit.FDE
}

// decodeDraft decodes the section data into a draft.
func decodeDraft(t *testing.T, data []byte) *draft {
	t.Helper()
	s, err := emit.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	fdes, err := s.Functions()
	if err != nil {
		t.Fatal(err)
	}
	return &draft{s, fdes}
}

// build returns the section of d: its functions appended in the order of
// their FRE data (the FRE offsets decoded), the index in d's order with
// the start fields of d's Section.
func (d *draft) build(t *testing.T) *emit.Section {
	t.Helper()
	order := make([]int, len(d.FDEs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(d.FDEs[a].FREOffset, d.FDEs[b].FREOffset) })
	s := &emit.Section{Header: d.Header, Trailer: d.Trailer}
	for _, i := range order {
		if err := s.AppendFDE(d.FDEs[i]); err != nil {
			t.Fatal(err)
		}
	}
	index := make([]emit.IndexEntry, len(order))
	for k, i := range order {
		index[i] = s.Index[k]
		index[i].StartOffset = d.Index[i].StartOffset
	}
	s.Index = index
	return s
}

// sortByStart sorts d's functions by start as ld does (stable, starts
// compared as signed offsets from the section at addr), their start
// fields set for their new positions, and sets FDE_SORTED.
func (d *draft) sortByStart(addr uint64) {
	n := len(d.FDEs)
	starts := make([]uint64, n)
	order := make([]int, n)
	for i := range order {
		order[i], starts[i] = i, d.FuncStart(i, addr)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(int64(starts[a]-addr), int64(starts[b]-addr)) })
	fdes, index := slices.Clone(d.FDEs), slices.Clone(d.Index)
	for j, i := range order {
		d.FDEs[j], d.Index[j] = fdes[i], index[i]
	}
	for j, i := range order {
		d.SetFuncStart(j, starts[i], addr)
	}
	d.Header.Flags |= emit.FlagFDESorted
}

// mutateRaw writes a copy of src whose .sframe bytes fn changed in place.
func mutateRaw(t *testing.T, src, dir string, fn func(data []byte, s *draft)) string {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	sec := emit.FindSection(f)
	data := raw[sec.Offset : sec.Offset+sec.Size]
	fn(data, decodeDraft(t, data))
	return writeCopy(t, dir, src, raw)
}

// mutateRela writes a copy of the object src with fn applied to the first
// entry of .rela.sframe.
func mutateRela(t *testing.T, src, dir string, fn func(ent []byte, bo binary.ByteOrder)) string {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".rela.sframe")
	if s == nil || s.Size < 24 {
		t.Fatalf("%s: no .rela.sframe", src)
	}
	fn(raw[s.Offset:s.Offset+24], f.ByteOrder)
	return writeCopy(t, dir, src, raw)
}

// freStartPos is the section offset of the start address of FRE j of FDE
// i (version 3 layout, no auxiliary header).
func freStartPos(s *draft, i, j int) int {
	p := emit.HeaderSize + len(s.FDEs)*emit.FDEIndexEntrySize + int(s.FDEs[i].FREOffset) + emit.FDEAttrSize
	f := &s.FDEs[i]
	for k := 0; k < j; k++ {
		p += f.FREType().AddrSize() + 1 + len(f.FREs[k].Words)*f.FREs[k].DataWordSize().Bytes()
	}
	return p
}

func writeCopy(t *testing.T, dir, src string, raw []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mutateProg writes a copy of src with fn applied to the ELF64 program
// header of type typ (its 56 bytes, little-endian fields).
func mutateProg(t *testing.T, src, dir string, typ elf.ProgType, fn func(ph []byte, bo binary.ByteOrder)) string {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	bo := f.ByteOrder
	phoff := bo.Uint64(raw[32:])
	for i := range f.Progs {
		if f.Progs[i].Type == typ {
			off := phoff + uint64(i)*56
			fn(raw[off:off+56], bo)
			return writeCopy(t, dir, src, raw)
		}
	}
	t.Fatalf("%s: no program header of type %v", src, typ)
	return ""
}

// mutateShdr writes a copy of src with fn applied to the ELF64 section
// header of the section named name (its 64 bytes).
func mutateShdr(t *testing.T, src, dir, name string, fn func(sh []byte, bo binary.ByteOrder)) string {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	bo := f.ByteOrder
	shoff := bo.Uint64(raw[0x28:])
	for i, s := range f.Sections {
		if s.Name == name {
			off := shoff + uint64(i)*64
			fn(raw[off:off+64], bo)
			return writeCopy(t, dir, src, raw)
		}
	}
	t.Fatalf("%s: no section %s", src, name)
	return ""
}

// firstFDE returns the index of the first PCINC FDE with at least n FREs
// whose data words are 1 byte, and of a default type.
func firstFDE(t *testing.T, s *draft, n int) int {
	t.Helper()
	for i, f := range s.FDEs {
		if f.PCType() == emit.PCInc && f.Type() == emit.FDEDefault && len(f.FREs) >= n && f.FREs[1].DataWordSize() == emit.DataWord1B &&
			f.FREs[1].StartAddr+2 < f.FREs[2].StartAddr {
			return i
		}
	}
	t.Fatal("no suitable FDE")
	return -1
}

func TestMutations(t *testing.T) {
	const linked = "../../testdata/link/x86_64/pie.gs.exe"
	const object = "../../testdata/cc/x86_64/O2/leveldb.gs.o"
	const aarch = "../../testdata/link/aarch64/pie.gs.exe"
	type tc struct {
		name   string
		src    string
		mutate func(t *testing.T, dir, src string) (path string, fde int)
		kind   Kind
		want   string
	}
	section := func(fn func(t *testing.T, s *draft, addr uint64) int) func(t *testing.T, dir, src string) (string, int) {
		return func(t *testing.T, dir, src string) (string, int) {
			var fde int
			p := mutateSection(t, src, dir, func(s *draft, addr uint64) { fde = fn(t, s, addr) })
			return p, fde
		}
	}
	cfaChanged := section(func(t *testing.T, s *draft, _ uint64) int {
		i := firstFDE(t, s, 3)
		s.FDEs[i].FREs[1].Words[0] += 8
		return i
	})
	freMoved := section(func(t *testing.T, s *draft, _ uint64) int {
		i := firstFDE(t, s, 3)
		s.FDEs[i].FREs[1].StartAddr++
		return i
	})
	tests := []tc{
		{"CFA offset changed", linked, cfaChanged, KindMismatch, "CFA: SFrame says sp+"},
		{"CFA offset changed, object", object, cfaChanged, KindMismatch, "CFA: SFrame says sp+"},
		{"FRE start moved", linked, freMoved, KindMismatch, "CFA: SFrame says sp+"},
		{"FRE start moved, object", object, freMoved, KindMismatch, ", CFI says sp+"},
		{"FRE starts not increasing", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			i := firstFDE(t, s, 3)
			s.FDEs[i].FREs[2].StartAddr = s.FDEs[i].FREs[1].StartAddr
			return i
		}), KindConsumer, "FRE starts must be strictly increasing"},
		{"first FRE not at 0", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			i := firstFDE(t, s, 3)
			s.FDEs[i].FREs[0].StartAddr = 1
			return i
		}), KindConsumer, "first FRE starts at 0x1"},
		{"FRE past the function", object, func(t *testing.T, dir, src string) (string, int) {
			// emit.Encode refuses this: patch the bytes.
			var fde int
			p := mutateRaw(t, src, dir, func(data []byte, s *draft) {
				fde = firstFDE(t, s, 3)
				f := &s.FDEs[fde]
				if f.FREType() != emit.FREAddr1 || f.Size+1 > 0xff {
					t.Fatal("FDE with 1-byte FRE starts needed")
				}
				data[freStartPos(s, fde, len(f.FREs)-1)] = byte(f.Size + 1)
			})
			_ = fde
			return p, -1 // emit.Decode refuses the section (naming FDE and FRE)
		}, KindFormat, "past the function size"},
		{"FDE_SORTED cleared", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			s.Header.Flags &^= emit.FlagFDESorted
			return -1
		}), KindConsumer, "lack SFRAME_F_FDE_SORTED"},
		{"PCREL cleared, object", object, section(func(t *testing.T, s *draft, _ uint64) int {
			s.Header.Flags &^= emit.FlagFDEFuncStartPCRel
			return -1
		}), KindConsumer, "lack SFRAME_F_FDE_FUNC_START_PCREL"},
		{"FDE start out of order", linked, section(func(t *testing.T, s *draft, addr uint64) int {
			a, b := s.FuncStart(3, addr), s.FuncStart(4, addr)
			s.FDEs[3], s.FDEs[4] = s.FDEs[4], s.FDEs[3]
			s.SetFuncStart(3, b, addr)
			s.SetFuncStart(4, a, addr)
			return 4
		}), KindConsumer, "FDE starts must be strictly increasing"},
		{"FDE moved outside the text", linked, section(func(t *testing.T, s *draft, addr uint64) int {
			s.SetFuncStart(4, 0x10, addr)
			s.sortByStart(addr)
			return 0
		}), KindConsumer, "not inside an executable PT_LOAD"},
		{"fixed RA offset changed", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			s.Header.CFAFixedRAOffset = -16
			return 0
		}), KindMismatch, "RA: SFrame says *(CFA-16), CFI says *(CFA-8)"},
		{"mangled RA on x86-64", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			i := firstFDE(t, s, 3)
			s.FDEs[i].FREs[0].Info |= 0x80
			return i
		}), KindMismatch, "which only AArch64 defines"},
		{"mangled RA cleared on aarch64", aarch, section(func(t *testing.T, s *draft, _ uint64) int {
			for i := range s.FDEs {
				for j := range s.FDEs[i].FREs {
					if s.FDEs[i].FREs[j].MangledRA() {
						t.Fatal("aarch64 input has signed RAs: pick another mutation")
					}
				}
			}
			s.FDEs[1].FREs[0].Info |= 0x80
			return 1
		}), KindMismatch, "RA signing: SFrame says signed, CFI says not signed"},
		{"PLT FRE changed", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			s.FDEs[1].FREs[1].Words[0] = 24
			return 1
		}), KindMismatch, "CFA: SFrame says sp+24, CFI says sp+16"},
		{"PLT FRE start moved", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			s.FDEs[1].FREs[1].StartAddr = 10
			return 1
		}), KindMismatch, "CFA: SFrame says sp+16, CFI says sp+8"},
		{"PCMASK rep_size 0", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			s.FDEs[1].RepSize = 0
			return 1
		}), KindConsumer, "rep_size 0"},
		{"leftover data word", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			// [CFA, FP] -> [CFA, FP, 0]: 3 words on AMD64, one too many; a
			// later [CFA, FP] loses its FP word to keep the size.
			i := firstFDE(t, s, 3)
			f := &s.FDEs[i]
			grown := -1
			for j := range f.FREs {
				e := &f.FREs[j]
				if len(e.Words) != 2 || e.DataWordSize() != emit.DataWord1B {
					continue
				}
				if grown < 0 {
					e.Words = append(e.Words, 0)
					e.Info = emit.FREInfo(e.BaseRegSP(), 3, emit.DataWord1B, false)
					grown = j
					continue
				}
				e.Words = e.Words[:1]
				e.Info = emit.FREInfo(e.BaseRegSP(), 1, emit.DataWord1B, false)
				return i
			}
			t.Fatal("no FREs to change")
			return i
		}), KindConsumer, "left over for a default FDE"},
		{"function shortened", object, section(func(t *testing.T, s *draft, _ uint64) int {
			for i := range s.FDEs {
				f := &s.FDEs[i]
				if len(f.FREs) > 0 && f.FREs[len(f.FREs)-1].StartAddr+1 < f.Size {
					f.Size--
					return -1 // the finding is about the CFI function
				}
			}
			t.Fatal("no FDE to shorten")
			return -1
		}), KindCoverage, "SFrame covers"},
		{"signal bit set", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			s.FDEs[3].Info |= 0x80
			return 3
		}), KindMismatch, "signal frame: SFrame says true, CFI (CIE augmentation \"S\") says false"},
		{"B key on aarch64", aarch, section(func(t *testing.T, s *draft, _ uint64) int {
			s.FDEs[1].Info |= 0x20
			return 1
		}), KindMismatch, "pointer authentication key: SFrame says B, CFI says A"},
		{"PCMASK FRE beyond the block", linked, section(func(t *testing.T, s *draft, _ uint64) int {
			s.FDEs[1].FREs[1].StartAddr = 20
			return 1
		}), KindFormat, "not within the 16-byte repeated block"},
		{"relocation dropped", object, func(t *testing.T, dir, src string) (string, int) {
			p := mutateRela(t, src, dir, func(ent []byte, bo binary.ByteOrder) {
				bo.PutUint64(ent[8:], 0) // R_X86_64_NONE
			})
			return p, -1
		}, KindConsumer, "the starts of FDEs"},
		{"relocation type changed", object, func(t *testing.T, dir, src string) (string, int) {
			p := mutateRela(t, src, dir, func(ent []byte, bo binary.ByteOrder) {
				bo.PutUint64(ent[8:], bo.Uint64(ent[8:])&^0xffffffff|uint64(elf.R_X86_64_64))
			})
			return p, 0
		}, KindConsumer, "not the 64-bit PC-relative"},
		{"relocation moved", object, func(t *testing.T, dir, src string) (string, int) {
			p := mutateRela(t, src, dir, func(ent []byte, bo binary.ByteOrder) {
				bo.PutUint64(ent[0:], bo.Uint64(ent[0:])+4)
			})
			return p, -1 // the function is unknown
		}, KindConsumer, "not at FDE 0's start field"},
		{"object section type PROGBITS", object, func(t *testing.T, dir, src string) (string, int) {
			return mutateShdr(t, src, dir, ".sframe", func(sh []byte, bo binary.ByteOrder) {
				bo.PutUint32(sh[4:], uint32(elf.SHT_PROGBITS))
			}), -1
		}, KindConsumer, "accepts only SHT_GNU_SFRAME"},
		{"section not allocated", linked, func(t *testing.T, dir, src string) (string, int) {
			return mutateShdr(t, src, dir, ".sframe", func(sh []byte, bo binary.ByteOrder) {
				bo.PutUint64(sh[8:], bo.Uint64(sh[8:])&^uint64(elf.SHF_ALLOC))
			}), -1
		}, KindConsumer, "is not SHF_ALLOC"},
		{"PT_GNU_SFRAME outside any PT_LOAD", linked, func(t *testing.T, dir, src string) (string, int) {
			return mutateProg(t, src, dir, programType, func(ph []byte, bo binary.ByteOrder) {
				bo.PutUint64(ph[16:], bo.Uint64(ph[16:])+0x100000)
			}), -1
		}, KindConsumer, "is not inside one PT_LOAD"},
		{"PT_GNU_SFRAME shrunk", linked, func(t *testing.T, dir, src string) (string, int) {
			return mutateProg(t, src, dir, programType, func(ph []byte, bo binary.ByteOrder) {
				bo.PutUint64(ph[32:], 0x20)
				bo.PutUint64(ph[40:], 0x20)
			}), -1
		}, KindConsumer, "the section is cut"},
		{"PT_GNU_SFRAME moved", linked, func(t *testing.T, dir, src string) (string, int) {
			return mutateProg(t, src, dir, programType, func(ph []byte, bo binary.ByteOrder) {
				bo.PutUint64(ph[16:], bo.Uint64(ph[16:])+8)
			}), -1
		}, KindConsumer, "PT_GNU_SFRAME at address"},
		{"PF_X on PT_PHDR over the text", linked, func(t *testing.T, dir, src string) (string, int) {
			// Registered first, over the text PT_LOAD's start: the
			// kernel then refuses the text's registration.
			return mutateProg(t, src, dir, elf.PT_PHDR, func(ph []byte, bo binary.ByteOrder) {
				bo.PutUint32(ph[4:], bo.Uint32(ph[4:])|uint32(elf.PF_X))
				bo.PutUint64(ph[16:], textLoad(t, src).Vaddr)
			}), -1
		}, KindConsumer, "(PT_PHDR) has PF_X: the kernel registers the section for it before program header"},
		{"PT_LOADs overlapping", linked, func(t *testing.T, dir, src string) (string, int) {
			return mutateProg(t, src, dir, elf.PT_LOAD, func(ph []byte, bo binary.ByteOrder) {
				bo.PutUint64(ph[40:], bo.Uint64(ph[40:])+0x100000)
			}), -1
		}, KindConsumer, "overlaps PT_LOAD"},
		{"no PT_GNU_SFRAME", linked, func(t *testing.T, dir, src string) (string, int) {
			return mutateProg(t, src, dir, programType, func(ph []byte, bo binary.ByteOrder) {
				bo.PutUint32(ph[0:], uint32(elf.PT_NULL))
			}), -1
		}, KindConsumer, "no PT_GNU_SFRAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The unmodified input must be clean, so that the finding comes
			// from the mutation.
			if r := checkFile(t, tt.src); len(r.Problems) != 0 {
				t.Fatalf("unmodified %s has problems:\n%s", tt.src, describe(r))
			}
			path, fde := tt.mutate(t, t.TempDir(), tt.src)
			r := checkFile(t, path)
			for _, p := range r.Problems {
				if p.Kind == tt.kind && strings.Contains(p.Msg, tt.want) && (fde < 0 || p.FDE == fde) {
					if fde >= 0 && !p.InFunction {
						t.Errorf("finding does not name its function: %+v", p)
					}
					return
				}
			}
			t.Errorf("no %s finding %q (FDE %d); got:\n%s", tt.kind, tt.want, fde, describe(r))
		})
	}
}

// textLoad returns the first executable PT_LOAD of the file at path.
func textLoad(t *testing.T, path string) *elf.Prog {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			return p
		}
	}
	t.Fatalf("%s: no executable PT_LOAD", path)
	return nil
}

// TestExecHeadersHarmless: PF_X headers after the text PT_LOADs (as
// linkers place PT_GNU_STACK) or outside any executable mapping are
// notes, not problems: the kernel refuses their registration and the
// text's stands.
func TestExecHeadersHarmless(t *testing.T) {
	const linked = "../../testdata/link/x86_64/pie.gs.exe"
	for _, tc := range []struct {
		typ  elf.ProgType
		want string
	}{
		{programType, "not in an executable mapping"},
		{elf.PT_GNU_STACK, "not in an executable mapping"},
		{elf.PT_PHDR, "not in an executable mapping"},
		{elf.PT_GNU_EH_FRAME, "not in an executable mapping"},
	} {
		path := mutateProg(t, linked, t.TempDir(), tc.typ, func(ph []byte, bo binary.ByteOrder) {
			bo.PutUint32(ph[4:], bo.Uint32(ph[4:])|uint32(elf.PF_X))
		})
		r := checkFile(t, path)
		if len(r.Problems) != 0 {
			t.Errorf("PF_X on %v: problems:\n%s", tc.typ, describe(r))
		}
		found := false
		for _, n := range r.Notes {
			found = found || strings.Contains(n.Msg, "("+tc.typ.String()+") has PF_X: the kernel refuses its registration") && strings.Contains(n.Msg, tc.want)
		}
		if !found {
			t.Errorf("PF_X on %v: no note; got:\n%s", tc.typ, describe(r))
		}
	}
}
