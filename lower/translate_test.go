package lower

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// Instruction builders for hand-made op lists.
func adv(n uint64) cfi.Instruction { return cfi.Instruction{Op: cfi.OpAdvanceLoc, Delta: n} }
func defCFA(r uint64, o int64) cfi.Instruction {
	return cfi.Instruction{Op: cfi.OpDefCFA, Reg: r, Offset: o}
}
func cfaOff(o int64) cfi.Instruction  { return cfi.Instruction{Op: cfi.OpDefCFAOffset, Offset: o} }
func cfaReg(r uint64) cfi.Instruction { return cfi.Instruction{Op: cfi.OpDefCFARegister, Reg: r} }
func offset(r uint64, o int64) cfi.Instruction {
	return cfi.Instruction{Op: cfi.OpOffset, Reg: r, Offset: o}
}
func valOff(r uint64, o int64) cfi.Instruction {
	return cfi.Instruction{Op: cfi.OpValOffset, Reg: r, Offset: o}
}
func restore(r uint64) cfi.Instruction   { return cfi.Instruction{Op: cfi.OpRestore, Reg: r} }
func undef(r uint64) cfi.Instruction     { return cfi.Instruction{Op: cfi.OpUndefined, Reg: r} }
func sameValue(r uint64) cfi.Instruction { return cfi.Instruction{Op: cfi.OpSameValue, Reg: r} }
func register(r1, r2 uint64) cfi.Instruction {
	return cfi.Instruction{Op: cfi.OpRegister, Reg: r1, Reg2: r2}
}

var (
	remember     = cfi.Instruction{Op: cfi.OpRememberState}
	restoreState = cfi.Instruction{Op: cfi.OpRestoreState}
	windowSave   = cfi.Instruction{Op: cfi.OpGNUWindowSave}
)

// escape is an instruction gas can only have got from .cfi_escape bytes.
func escape(raw ...byte) cfi.Instruction {
	ins := cfi.Instruction{Op: cfi.Op(raw[0]), Raw: raw}
	if raw[0] == byte(cfi.OpValExpression) && len(raw) > 3 {
		ins.Expr = raw[3:]
	}
	return ins
}

// Initial instructions gas writes in every CIE.
var (
	x86CIE   = []cfi.Instruction{defCFA(7, 8), offset(16, -8)}
	a64CIE   = []cfi.Instruction{defCFA(31, 0)}
	s390xCIE = []cfi.Instruction{defCFA(15, 160)}
)

// fre is an expected FRE: start, info byte, data words.
type fre struct {
	pc    uint32
	info  uint8
	words []int32
}

func (f fre) String() string { return fmt.Sprintf("@%#x info %#02x %v", f.pc, f.info, f.words) }

type unitCase struct {
	name   string
	arch   Arch
	size   uint64 // default 0x20
	zero   bool   // the size is 0
	noCIE  bool   // no CIE initial instructions (.cfi_startproc simple)
	signal bool
	pauthB bool
	ops    []cfi.Instruction // CIE initial instructions are prepended
	// Expected: either reason (skipped; emitted says the signal fallback
	// kept it) or the FREs with flex and info.
	reason  string
	emitted bool
	flex    bool
	info    uint8
	fres    []fre
}

// runOps lowers a hand-made op list as Lowerer.Function does for an FDE.
func runOps(t *testing.T, c unitCase, opt Options) (emit.FDE, *Skip) {
	t.Helper()
	target := Target{Arch: c.arch, BigEndian: c.arch == S390X}
	l, err := NewLowerer(nil, target, opt)
	if err != nil {
		t.Fatal(err)
	}
	size := c.size
	if size == 0 && !c.zero {
		size = 0x20
	}
	var cie []cfi.Instruction
	switch {
	case c.noCIE:
	case c.arch == AMD64:
		cie = x86CIE
	case c.arch == AArch64:
		cie = a64CIE
	case c.arch == S390X:
		cie = s390xCIE
	}
	return l.lower(size, c.signal, c.pauthB, func() error {
		l.x.reset(l.regs, size)
		l.x.gas = opt.GasCompat
		for _, ops := range [][]cfi.Instruction{cie, c.ops} {
			for i := range ops {
				if err := l.x.step(&ops[i], 0); err != nil {
					return err
				}
			}
			if !l.x.cieDone {
				l.x.endCIE()
			}
		}
		return l.x.finish()
	})
}

func checkUnit(t *testing.T, c unitCase, opt Options) {
	t.Helper()
	fde, skip := runOps(t, c, opt)
	if c.reason != "" {
		if skip == nil {
			t.Fatalf("not skipped; want %q", c.reason)
		}
		if skip.Reason != c.reason || skip.Emitted != c.emitted {
			t.Fatalf("skip %q (emitted %v), want %q (emitted %v)", skip.Reason, skip.Emitted, c.reason, c.emitted)
		}
		if !c.emitted {
			return
		}
	} else if skip != nil {
		t.Fatalf("skipped: %s", skip.Reason)
	}
	if fde.Info != c.info {
		t.Errorf("func info %#02x, want %#02x", fde.Info, c.info)
	}
	if got := fde.Info2 == uint8(emit.FDEFlex); got != c.flex {
		t.Errorf("flex %v, want %v", got, c.flex)
	}
	var got, want []string
	for _, e := range fde.FREs {
		got = append(got, fre{e.StartAddr, e.Info, e.Words}.String())
	}
	for _, e := range c.fres {
		want = append(want, e.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("FREs:\n got: %v\nwant: %v", got, want)
	}
}

// TestHandlers runs every case in GasCompat mode, and in the default
// (correct) mode with the expectations of correctCases where gas's
// translation does not mean what the CFI means (the same otherwise).
func TestHandlers(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range unitCases {
		if seen[c.name] {
			t.Fatalf("duplicate case name %q", c.name)
		}
		seen[c.name] = true
		t.Run("gas/"+c.arch.String()+"/"+c.name, func(t *testing.T) { checkUnit(t, c, Options{GasCompat: true}) })
		cc := c
		if fix, ok := correctCases[c.name]; ok {
			cc = fix
			cc.name, cc.arch, cc.size, cc.zero, cc.noCIE, cc.signal, cc.pauthB, cc.ops =
				c.name, c.arch, c.size, c.zero, c.noCIE, c.signal, c.pauthB, c.ops
		}
		t.Run("correct/"+c.arch.String()+"/"+c.name, func(t *testing.T) { checkUnit(t, cc, Options{}) })
	}
	for name := range correctCases {
		if !seen[name] {
			t.Errorf("correctCases has %q, which is not in unitCases", name)
		}
	}
}

var unitCases = []unitCase{
	// --- FRE boundaries and merging (gas sframe_xlate_do_advance_loc).
	{name: "empty function: one FRE from the CIE", arch: AMD64, zero: true,
		fres: []fre{{0, 0x03, []int32{8}}}},
	{name: "irrelevant op does not start an FRE", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), cfaOff(16), adv(3), offset(3, -24), adv(2), cfaOff(8)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{16}}, {6, 0x03, []int32{8}}}},
	{name: "trailing duplicate FRE", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), cfaOff(16), offset(6, -16), adv(1), offset(3, -24)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x05, []int32{16, -16}}, {2, 0x05, []int32{16, -16}}}},
	{name: "touching op without change gives a duplicate", arch: AMD64,
		ops:  []cfi.Instruction{adv(4), cfaOff(8), adv(4), cfaOff(8)},
		fres: []fre{{0, 0x03, []int32{8}}, {4, 0x03, []int32{8}}, {8, 0x03, []int32{8}}}},
	{name: "zero advance gives an FRE at the same PC", arch: AMD64,
		ops:  []cfi.Instruction{adv(2), cfaOff(16), adv(0), cfaOff(24)},
		fres: []fre{{0, 0x03, []int32{8}}, {2, 0x03, []int32{16}}, {2, 0x03, []int32{24}}}},
	{name: "FRE may start at the function end", arch: AMD64, size: 4,
		ops:  []cfi.Instruction{adv(4), cfaOff(16)},
		fres: []fre{{0, 0x03, []int32{8}}, {4, 0x03, []int32{16}}}},
	{name: "advance past the end", arch: AMD64, size: 4,
		ops: []cfi.Instruction{adv(5), cfaOff(16)}, reason: "CFI advances to 0x5, past the function end 0x4"},

	// --- def_cfa family.
	{name: "def_cfa_register takes the offset of the last committed FRE", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), cfaOff(16), cfaReg(6)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x02, []int32{8}}}},
	{name: "def_cfa_register before any commit keeps the offset", arch: AMD64,
		ops:  []cfi.Instruction{cfaOff(16), cfaReg(6)},
		fres: []fre{{0, 0x02, []int32{16}}}},
	{name: "non-SP/FP CFA makes AMD64 flex", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), defCFA(10, 0), adv(1), cfaOff(16)},
		flex: true, info: 0x00,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x04, []int32{0x51, 0}}, {2, 0x04, []int32{0x51, 16}}}},
	{name: "control word above 255 needs 2-byte words", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), defCFA(33, 8)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x24, []int32{0x109, 8}}}},
	{name: "non-SP/FP CFA refused on AArch64", arch: AArch64,
		ops: []cfi.Instruction{adv(1), defCFA(9, 0)}, reason: "non-SP/FP register 9 in .cfi_def_cfa"},
	{name: "non-SP/FP def_cfa_register refused on AArch64", arch: AArch64,
		ops: []cfi.Instruction{adv(1), cfaReg(19)}, reason: "non-SP/FP register 19 in .cfi_def_cfa_register"},
	{name: "def_cfa offset beyond int32", arch: AMD64,
		ops: []cfi.Instruction{defCFA(7, 1<<31)}, reason: ".cfi_def_cfa with unsupported offset value"},
	{name: "def_cfa_offset beyond int32", arch: AMD64,
		ops: []cfi.Instruction{cfaOff(-1 << 32)}, reason: ".cfi_def_cfa_offset with unsupported offset value"},
	{name: "def_cfa_offset with no CFA register (simple CIE)", arch: AMD64, noCIE: true,
		ops: []cfi.Instruction{adv(1), cfaOff(16)}, reason: ".cfi_def_cfa_offset without CFA base register in effect"},
	{name: "simple CIE: the first advance starts an empty FRE", arch: AMD64, noCIE: true,
		ops:  []cfi.Instruction{adv(1), defCFA(7, 8), adv(1), cfaOff(16)},
		fres: []fre{{1, 0x03, []int32{8}}, {2, 0x03, []int32{16}}}},
	{name: "simple CIE with no CFI: no FREs", arch: AMD64, noCIE: true},
	{name: "op needing a CFA before any", arch: AMD64, noCIE: true,
		ops: []cfi.Instruction{offset(6, -16)}, reason: "DW_CFA_offset before any CFA rule"},
	{name: "data word sizes: -128 fits one byte, 128 does not", arch: AMD64,
		ops: []cfi.Instruction{adv(1), cfaOff(-128), adv(1), cfaOff(128), adv(1), cfaOff(1 << 16)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{-128}}, {2, 0x23, []int32{128}},
			{3, 0x43, []int32{1 << 16}}}},
	{name: "FRE type from the function size", arch: AMD64, size: 0x100, info: 0x01,
		ops:  []cfi.Instruction{adv(0x100), cfaOff(16)},
		fres: []fre{{0, 0x03, []int32{8}}, {0x100, 0x03, []int32{16}}}},
	{name: "4-byte FRE starts", arch: AMD64, size: 0x10000, info: 0x02,
		fres: []fre{{0, 0x03, []int32{8}}}},

	// --- offset / restore / same_value / undefined.
	{name: "restore uses the first committed FRE", arch: AMD64,
		ops: []cfi.Instruction{offset(6, -16), adv(1), cfaOff(16), adv(1), offset(6, -24), adv(1), restore(6)},
		fres: []fre{{0, 0x05, []int32{8, -16}}, {1, 0x05, []int32{16, -16}}, {2, 0x05, []int32{16, -24}},
			{3, 0x05, []int32{16, -16}}}},
	{name: "restore before any commit (PR 33170)", arch: AMD64,
		ops:  []cfi.Instruction{restore(6), adv(1), offset(6, -16)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x05, []int32{8, -16}}}},
	{name: "same_value FP untracks it", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), offset(6, -16), adv(1), sameValue(6)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x05, []int32{8, -16}}, {2, 0x03, []int32{8}}}},
	{name: "RA undefined is an FRE without data words", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), undef(16), adv(1), offset(16, -8)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x00, nil}, {2, 0x00, nil}}},
	{name: "RA saved away from CFA-8 makes AMD64 flex", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), offset(16, -16)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x08, []int32{0x39, 8, 2, -16}}}},
	{name: "register FP to rbx is flex with a padding RA word", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), register(6, 3)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x0a, []int32{0x39, 8, 0, 0x19, 0}}}},
	{name: "register SP refused", arch: AMD64,
		ops: []cfi.Instruction{adv(1), register(7, 3)}, reason: "SP register 7 in .cfi_register"},
	{name: "register RA refused on AArch64", arch: AArch64,
		ops: []cfi.Instruction{register(30, 3)}, reason: "RA register 30 in .cfi_register"},
	{name: "register SP ignored on s390x", arch: S390X,
		ops:  []cfi.Instruction{adv(2), register(15, 17)},
		fres: []fre{{0, 0x03, []int32{0}}, {2, 0x03, []int32{0}}}},
	{name: "undefined FP", arch: AMD64, ops: []cfi.Instruction{undef(6)}, reason: "FP reg 6 in .cfi_undefined"},
	{name: "val_offset SP 0 is the default rule", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), valOff(7, 0)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{8}}}},
	{name: "val_offset SP -160 is the s390x default rule", arch: S390X,
		ops:  []cfi.Instruction{adv(1), valOff(15, -160)},
		fres: []fre{{0, 0x03, []int32{0}}, {1, 0x03, []int32{0}}}},
	{name: "val_offset SP", arch: AMD64, ops: []cfi.Instruction{valOff(7, 8)}, reason: ".cfi_val_offset with SP reg 7"},
	{name: "val_offset other register", arch: AMD64, ops: []cfi.Instruction{valOff(3, 8)},
		fres: []fre{{0, 0x03, []int32{8}}}},

	// --- remember/restore state.
	{name: "remember copies the scratch FRE", arch: AMD64,
		ops: []cfi.Instruction{adv(1), cfaOff(16), remember, adv(1), cfaOff(24), adv(1), restoreState},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{16}}, {2, 0x03, []int32{24}},
			{3, 0x03, []int32{16}}}},
	{name: "remember without any FRE", arch: AMD64, noCIE: true,
		ops: []cfi.Instruction{remember}, reason: ".cfi_remember_state without prior SFrame FRE state"},
	{name: "remember at the function start", arch: AMD64,
		ops:  []cfi.Instruction{remember, adv(1), cfaOff(16), adv(1), restoreState},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{16}}, {2, 0x03, []int32{8}}}},

	// --- AArch64.
	{name: "negate_ra_state toggles mangled RA", arch: AArch64,
		ops:  []cfi.Instruction{windowSave, adv(4), cfaOff(16), offset(29, -16), offset(30, -8), adv(4), windowSave},
		fres: []fre{{0, 0x83, []int32{0}}, {4, 0x87, []int32{16, -8, -16}}, {8, 0x07, []int32{16, -8, -16}}}},
	{name: "B key", arch: AArch64, pauthB: true, info: 0x20,
		fres: []fre{{0, 0x03, []int32{0}}}},
	{name: "FP without RA", arch: AArch64,
		ops: []cfi.Instruction{adv(4), offset(29, -16)}, reason: "FP without RA on stack"},
	{name: "RA only", arch: AArch64,
		ops:  []cfi.Instruction{adv(4), offset(30, -8), adv(4), sameValue(30)},
		fres: []fre{{0, 0x03, []int32{0}}, {4, 0x05, []int32{0, -8}}, {8, 0x03, []int32{0}}}},
	{name: "negate_ra_state_with_pc", arch: AArch64,
		ops: []cfi.Instruction{{Op: cfi.OpAArch64NegateRAStateWithPC, Raw: []byte{0x2c}}}, reason: ".cfi_negate_ra_state_with_pc"},
	{name: "window_save elsewhere", arch: AMD64, ops: []cfi.Instruction{windowSave}, reason: ".cfi_window_save"},
	{name: "DW_CFA_expression FP is flex even on AArch64 (gas bug)", arch: AArch64,
		ops:  []cfi.Instruction{adv(4), escape(0x10, 29, 2, 0x8f, 0x10)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{-7, 0}}, {4, 0x4a, []int32{0xf9, 0, 0, -5, 16}}}},

	// --- s390x.
	{name: "s390x CFA encoding truncates toward zero", arch: S390X,
		ops: []cfi.Instruction{adv(2), cfaOff(164), adv(2), cfaOff(100), adv(2), cfaOff(1200)},
		fres: []fre{{0, 0x03, []int32{0}}, {2, 0x03, []int32{0}}, {4, 0x03, []int32{-7}},
			{6, 0x23, []int32{130}}}},
	{name: "s390x FP without RA gets a padding word", arch: S390X,
		ops:  []cfi.Instruction{adv(2), offset(11, -72), adv(2), offset(14, -48)},
		fres: []fre{{0, 0x03, []int32{0}}, {2, 0x07, []int32{0, 0, -72}}, {4, 0x07, []int32{0, -48, -72}}}},
	{name: "s390x RA in a register is flex, CFA still encoded", arch: S390X,
		ops:  []cfi.Instruction{adv(4), register(14, 16)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x79, 0}}, {4, 0x08, []int32{0x79, 0, -127, 0}}}},
	{name: "s390x def_cfa_register keeps the encoded offset", arch: S390X,
		ops:  []cfi.Instruction{adv(2), defCFA(11, 320), adv(2), cfaReg(15)},
		fres: []fre{{0, 0x03, []int32{0}}, {2, 0x02, []int32{20}}, {4, 0x03, []int32{20}}}},

	// --- escapes.
	{name: "DRAP: def_cfa_expression *(rbp-8)", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), escape(0x0f, 3, 0x76, 0x78, 0x06), adv(1), cfaOff(16)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x04, []int32{0x33, -8}}, {2, 0x04, []int32{0x33, 16}}}},
	{name: "def_cfa_expression of another shape", arch: AMD64,
		ops: []cfi.Instruction{escape(0x0f, 3, 0x77, 0x78, 0x06)}, reason: ".cfi_escape with op (0xf)"},
	{name: "DW_CFA_expression of another register is harmless", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), escape(0x10, 3, 2, 0x76, 0x78)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{8}}}}, // trailing duplicate
	{name: "DW_CFA_expression of the CFA register", arch: AMD64,
		ops:    []cfi.Instruction{defCFA(10, 0), escape(0x10, 10, 2, 0x76, 0x78)},
		reason: ".cfi_escape DW_CFA_expression with (null) reg 10"},
	{name: "DW_CFA_expression wrong shape", arch: AMD64,
		ops: []cfi.Instruction{escape(0x10, 3, 3, 0x76, 0x78, 0)}, reason: ".cfi_escape with op (0x10)"},
	{name: "args_size 0 is harmless", arch: AMD64,
		ops: []cfi.Instruction{escape(0x2e, 0)}, fres: []fre{{0, 0x03, []int32{8}}}},
	{name: "args_size with FP-based CFA is harmless", arch: AMD64,
		ops: []cfi.Instruction{cfaReg(6), escape(0x2e, 16)}, fres: []fre{{0, 0x02, []int32{8}}}},
	{name: "args_size with SP-based CFA", arch: AMD64,
		ops: []cfi.Instruction{escape(0x2e, 16)}, reason: ".cfi_escape with op (0x2e)"},
	{name: "nops are harmless", arch: AMD64,
		ops: []cfi.Instruction{escape(0), escape(0)}, fres: []fre{{0, 0x03, []int32{8}}}},
	{name: "val_expression", arch: AMD64,
		ops: []cfi.Instruction{escape(0x16, 3, 2, 0x70, 0)}, reason: ".cfi_escape with op (0x16)"},
	{name: "val_encoded_addr", arch: AMD64,
		ops:    []cfi.Instruction{escape(0x16, 3, 9, 0x03, 1, 2, 3, 4, 5, 6, 7, 8)},
		reason: "CFI insn CFI_val_encoded_addr (0x105)"},

	// --- signal frames.
	{name: "signal frame kept with no FREs", arch: AMD64, signal: true,
		ops:    []cfi.Instruction{adv(1), cfaOff(16), adv(1), escape(0x16, 3, 2, 0x70, 0)},
		reason: ".cfi_escape with op (0x16)", emitted: true, info: 0x80},
	{name: "signal frame translated normally", arch: AMD64, signal: true, info: 0x80,
		fres: []fre{{0, 0x03, []int32{8}}}},
}

func TestFRELimit(t *testing.T) {
	// 65535 FREs fit; 65536 do not.
	for _, n := range []int{maxFREs, maxFREs + 1, maxFREs + 5} {
		ops := make([]cfi.Instruction, 0, 2*n)
		for i := 1; i < n; i++ {
			ops = append(ops, adv(1), cfaOff(int64(8+8*(i%2))))
		}
		c := unitCase{arch: AMD64, size: uint64(n), ops: ops}
		fde, skip := runOps(t, c, Options{})
		switch {
		case n <= maxFREs && (skip != nil || len(fde.FREs) != n):
			t.Errorf("%d FREs: skip %v, %d FREs", n, skip, len(fde.FREs))
		case n > maxFREs && (skip == nil || skip.Reason != "Number of FREs exceeds UINT16_MAX"):
			t.Errorf("%d FREs: skip %v", n, skip)
		}
	}
}

// correctCases are the expectations in the default (correct) mode for the
// unitCases where gas's translation does not mean what the CFI means (the
// inputs come from the unitCase of the same name).
var correctCases = map[string]unitCase{
	"def_cfa_register takes the offset of the last committed FRE": {
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x02, []int32{16}}}},
	"restore uses the first committed FRE": {
		fres: []fre{{0, 0x05, []int32{8, -16}}, {1, 0x05, []int32{16, -16}}, {2, 0x05, []int32{16, -24}},
			{3, 0x03, []int32{16}}}},
	"RA undefined is an FRE without data words": {
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x00, nil}, {2, 0x03, []int32{8}}}},
	"DW_CFA_expression FP is flex even on AArch64 (gas bug)": {
		reason: ".cfi_escape DW_CFA_expression with FP reg 29"},
	"s390x CFA encoding truncates toward zero": {
		reason: "CFA offset 164 not representable on s390x (stored as (offset-160)/8 in 32 bits)"},
	"zero advance gives an FRE at the same PC": {
		fres: []fre{{0, 0x03, []int32{8}}, {2, 0x03, []int32{24}}}},
	"DRAP: def_cfa_expression *(rbp-8)": {flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x04, []int32{0x33, -8}}, {2, 0x04, []int32{0x33, -8}}}},
	"nested remember_state": {
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{16}}, {2, 0x03, []int32{24}}, {3, 0x03, []int32{32}},
			{4, 0x03, []int32{24}}, {5, 0x03, []int32{16}}}},
	"restore RA and FP go back to the CIE, not to the FDE's leading ops": {
		fres: []fre{{0, 0x07, []int32{16, -8, -16}}, {4, 0x03, []int32{16}}}},
	"same_value RA on AMD64": {reason: "RA reg 16 in DW_CFA_same_value"},
	"val_offset RA on AMD64": {reason: ".cfi_val_offset with RA reg 16"},
	"restore RA after undefined on AMD64": {
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x00, nil}, {2, 0x03, []int32{8}}}},
	"DW_CFA_expression RA on AMD64": {reason: ".cfi_escape DW_CFA_expression with RA reg 16"},
	"DW_CFA_expression FP with another base register": {flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x0a, []int32{0x39, 8, 0, 0x1b, 16}}}},
	"DW_CFA_expression FP on s390x": {flex: true,
		fres: []fre{{0, 0x04, []int32{0x79, 0}}, {4, 0x0a, []int32{0x79, 0, 0, 0x7b, 16}}}},
	"DW_CFA_expression FP with DW_OP_fbreg": {
		reason: "DW_CFA_expression for FP reg 6: only DW_OP_breg<n> with a one-byte offset is representable"},
	"s390x CFA offset beyond 32 bits once decoded": {
		reason: "CFA offset 17179869184 not representable on s390x (stored as (offset-160)/8 in 32 bits)"},
	"DRAP then def_cfa_offset and def_cfa_register": {
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x04, []int32{0x33, -8}}, {2, 0x04, []int32{0x39, 16}}}, flex: true},
	"AMD64 flex RA offset beyond one byte": {flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x28, []int32{0x39, 8, 2, -152}}}},
	"RA undefined, then same_value on AMD64": {reason: "RA reg 16 in DW_CFA_same_value"},
	"simple CIE: the first advance starts an empty FRE": {
		reason: "no CFA rule at offset 0x0 (.cfi_startproc simple without .cfi_def_cfa)"},
	"simple CIE: an FRE with no CFA": {
		reason: "no CFA rule at offset 0x0 (.cfi_startproc simple without .cfi_def_cfa)"},
}

// unitCasesFixed are the cases for gas's translations that do not mean
// what the CFI means (correctCases has the correct-mode expectations).
var unitCasesFixed = []unitCase{
	{name: "nested remember_state", arch: AMD64,
		ops: []cfi.Instruction{adv(1), cfaOff(16), remember, adv(1), cfaOff(24), remember, adv(1), cfaOff(32),
			adv(1), restoreState, adv(1), restoreState},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{16}}, {2, 0x03, []int32{24}}, {3, 0x03, []int32{32}},
			{4, 0x03, []int32{24}}, {5, 0x03, []int32{24}}}},
	{name: "restore RA and FP go back to the CIE, not to the FDE's leading ops", arch: AArch64,
		ops:  []cfi.Instruction{cfaOff(16), offset(29, -16), offset(30, -8), adv(4), restore(29), restore(30)},
		fres: []fre{{0, 0x07, []int32{16, -8, -16}}, {4, 0x07, []int32{16, -8, -16}}}},
	{name: "same_value RA on AMD64", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), sameValue(16)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{8}}}},
	{name: "val_offset RA on AMD64", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), valOff(16, 0)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{8}}}},
	{name: "restore RA after undefined on AMD64", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), undef(16), adv(1), restore(16)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x00, nil}, {2, 0x00, nil}}},
	{name: "DW_CFA_expression RA on AMD64", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), escape(0x10, 16, 2, 0x77, 0x08)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{8}}}},
	{name: "DW_CFA_expression FP with another base register", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), escape(0x10, 6, 2, 0x73, 0x10)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x4a, []int32{0x39, 8, 0, -5, 16}}}},
	{name: "DW_CFA_expression FP on s390x", arch: S390X,
		ops:  []cfi.Instruction{adv(4), escape(0x10, 11, 2, 0x7f, 0x10)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x79, 0}}, {4, 0x4a, []int32{0x79, 0, 0, -5, 16}}}},
	{name: "DW_CFA_expression FP with DW_OP_fbreg", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), escape(0x10, 6, 2, 0x91, 0x10)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x4a, []int32{0x39, 8, 0, -5, 16}}}},
	{name: "s390x CFA offset beyond 32 bits once decoded", arch: S390X,
		ops:  []cfi.Instruction{adv(2), cfaOff(1 << 34)},
		fres: []fre{{0, 0x03, []int32{0}}, {2, 0x43, []int32{(1<<34 - 160) / 8}}}},
	{name: "DRAP then def_cfa_offset and def_cfa_register", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), escape(0x0f, 3, 0x76, 0x78, 0x06), adv(1), cfaOff(16), cfaReg(7)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x04, []int32{0x33, -8}}, {2, 0x04, []int32{0x39, -8}}}},
	{name: "AMD64 flex RA offset beyond one byte", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), offset(16, -152)},
		flex: true,
		fres: []fre{{0, 0x04, []int32{0x39, 8}}, {1, 0x08, []int32{0x39, 8, 2, 104}}}}, // -152 truncated
	{name: "AMD64 RA same_value overridden at the same address", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), sameValue(16), offset(16, -8), adv(1), cfaOff(16)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x03, []int32{8}}, {2, 0x03, []int32{16}}}},
	{name: "s390x CFA offset off the grid, replaced at the same address", arch: S390X,
		ops:  []cfi.Instruction{adv(2), cfaOff(164), cfaOff(168)},
		fres: []fre{{0, 0x03, []int32{0}}, {2, 0x03, []int32{1}}}},
	{name: "gas's refusal comes first", arch: S390X,
		ops: []cfi.Instruction{adv(2), cfaOff(164), adv(2), undef(11)}, reason: "FP reg 11 in .cfi_undefined"},
	{name: "RA undefined, then same_value on AMD64", arch: AMD64,
		ops:  []cfi.Instruction{adv(1), undef(16), adv(1), sameValue(16)},
		fres: []fre{{0, 0x03, []int32{8}}, {1, 0x00, nil}, {2, 0x00, nil}}},
	{name: "simple CIE: an FRE with no CFA", arch: AMD64, noCIE: true,
		ops:  []cfi.Instruction{adv(1), offset(6, -16), adv(1), defCFA(7, 16)},
		fres: []fre{{1, 0x05, []int32{0, -16}}, {2, 0x05, []int32{16, -16}}}},
	{name: "DRAP with a multi-byte offset", arch: AMD64,
		ops: []cfi.Instruction{adv(1), escape(0x0f, 3, 0x76, 0x88, 0x06)}, reason: ".cfi_escape with op (0xf)"},
}

func init() { unitCases = append(unitCases, unitCasesFixed...) }
