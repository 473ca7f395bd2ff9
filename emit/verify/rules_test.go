package verify

import (
	"encoding/binary"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

func fre(start uint32, baseSP bool, words ...int32) emit.FRE {
	size := emit.DataWord1B
	for _, w := range words {
		if s, _ := emit.DataWordSizeFor(int64(w)); s > size {
			size = s
		}
	}
	return emit.FRE{StartAddr: start, Info: emit.FREInfo(baseSP, len(words), size, false), Words: words}
}

func TestSFrameFrame(t *testing.T) {
	amd := &emit.Header{Version: 3, ABI: emit.ABIAMD64LittleEndian, CFAFixedRAOffset: -8}
	arm := &emit.Header{Version: 3, ABI: emit.ABIAArch64LittleEndian}
	s390 := &emit.Header{Version: 3, ABI: emit.ABIS390XBigEndian}
	def := &emit.FDE{}
	flex := &emit.FDE{Info2: uint8(emit.FDEFlex)}
	ctl := func(reg uint32, deref, regP bool) int32 { return int32(emit.FlexControlWord(reg, deref, regP)) }
	tests := []struct {
		name    string
		h       *emit.Header
		fde     *emit.FDE
		e       emit.FRE
		cfa     string
		ra, fp  string
		undef   bool
		problem bool
	}{
		{"amd64 sp+8", amd, def, fre(0, true, 8), "sp+8", "*(CFA-8)", "unchanged (no rule)", false, false},
		{"amd64 fp+16 fp saved", amd, def, fre(0, false, 16, -16), "fp+16", "*(CFA-8)", "*(CFA-16)", false, false},
		{"amd64 ra undefined", amd, def, fre(0, true), "", "", "", true, false},
		{"amd64 three words", amd, def, fre(0, true, 8, -16, 4), "", "", "", false, true},
		{"aarch64 cfa only", arm, def, fre(0, true, 0), "sp+0", "unchanged (no rule)", "unchanged (no rule)", false, false},
		{"aarch64 ra", arm, def, fre(0, true, 16, -8), "sp+16", "*(CFA-8)", "unchanged (no rule)", false, false},
		{"aarch64 ra fp", arm, def, fre(0, false, 16, -8, -16), "fp+16", "*(CFA-8)", "*(CFA-16)", false, false},
		{"aarch64 four words", arm, def, fre(0, false, 16, -8, -16, 0), "", "", "", false, true},
		{"s390x encoded cfa", s390, def, fre(0, true, 0), "sp+160", "unchanged (no rule)", "unchanged (no rule)", false, false},
		{"s390x padding ra", s390, def, fre(0, true, 34, 0, -72), "sp+432", "unchanged (no rule)", "*(CFA-72)", false, false},
		{"s390x ra fp", s390, def, fre(0, false, 0, -48, -72), "fp+160", "*(CFA-48)", "*(CFA-72)", false, false},
		{"flex drap", amd, flex, fre(0, false, ctl(6, true, true), -8), "*(fp-8)", "*(CFA-8)", "unchanged (no rule)", false, false},
		{"flex r10", amd, flex, fre(0, false, ctl(10, false, true), 16), "r10+16", "*(CFA-8)", "unchanged (no rule)", false, false},
		{"flex pad then fp", amd, flex, fre(0, false, ctl(7, false, true), 16, 0, ctl(0, true, false), -16), "sp+16", "*(CFA-8)", "*(CFA-16)", false, false},
		{"flex ra in register", s390, flex, fre(0, false, ctl(15, false, true), 0, ctl(17, false, true), 0), "sp+160", "r17", "unchanged (no rule)", false, false},
		{"flex fp expression", amd, flex, fre(0, false, ctl(7, false, true), 16, 0, ctl(6, true, true), 16), "sp+16", "*(CFA-8)", "*(fp+16)", false, false},
		{"flex one word", amd, flex, fre(0, false, ctl(7, false, true)), "", "", "", false, true},
		{"flex cfa without reg_p", amd, flex, fre(0, false, ctl(0, true, false), 8), "", "", "", false, true},
		{"flex pad only", amd, flex, fre(0, false, ctl(7, false, true), 8, 0), "", "", "", false, true},
		{"flex ra pair and pad", amd, flex, fre(0, false, ctl(7, false, true), 8, ctl(0, true, false), -8, 0), "", "", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, undef, msg := sframeFrame(tt.h, tt.fde, &tt.e)
			if (msg != "") != tt.problem {
				t.Fatalf("problem %q, want problem %v", msg, tt.problem)
			}
			if undef != tt.undef {
				t.Fatalf("RA undefined %v, want %v", undef, tt.undef)
			}
			if tt.problem || tt.undef {
				return
			}
			abi := tt.h.ABI
			if got := f.cfa.formatCFA(abi); got != tt.cfa {
				t.Errorf("CFA %s, want %s", got, tt.cfa)
			}
			if got := f.ra.format(abi); got != tt.ra {
				t.Errorf("RA %s, want %s", got, tt.ra)
			}
			if got := f.fp.format(abi); got != tt.fp {
				t.Errorf("FP %s, want %s", got, tt.fp)
			}
		})
	}
}

func TestEvalExpr(t *testing.T) {
	// ld's x86-64 lazy PLT: rsp + 8 + ((rip & 15) >= 11) << 3
	plt := []byte{0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}
	for pc, want := range map[uint64]int64{0x1030: 8, 0x103a: 8, 0x103b: 16, 0x103f: 16, 0x1040: 8} {
		v, err := evalExpr(plt, binary.LittleEndian, false, 16, pc, true)
		if err != nil || !v.sym || v.reg != 7 || v.off != want || v.deref {
			t.Errorf("PLT at %#x: %+v, %v; want rsp+%d", pc, v, err, want)
		}
	}
	if _, err := evalExpr(plt, binary.LittleEndian, false, 16, 0, false); err != errPC {
		t.Errorf("PLT without a PC: %v, want errPC", err)
	}
	tests := []struct {
		name    string
		expr    []byte
		pushCFA bool
		want    value
		bad     bool
	}{
		{"drap", []byte{0x76, 0x78, 0x06}, false, value{sym: true, reg: 6, off: -8, deref: true}, false},
		{"bregx", []byte{0x92, 10, 0x10}, false, value{sym: true, reg: 10, off: 16}, false},
		{"cfa minus", []byte{0x10, 16, 0x1c}, true, value{sym: true, cfa: true, off: -16}, false},
		{"plus_uconst", []byte{0x77, 0, 0x23, 0x20}, false, value{sym: true, reg: 7, off: 32}, false},
		{"const2s", []byte{0x0b, 0xf0, 0xff}, false, value{off: -16}, false},
		{"double deref", []byte{0x76, 0, 0x06, 0x06}, false, value{}, true},
		{"register product", []byte{0x76, 0, 0x77, 0, 0x1e}, false, value{}, true},
		{"underflow", []byte{0x22}, false, value{}, true},
		{"truncated", []byte{0x76}, false, value{}, true},
		// The offset 1<<64 does not fit: not the 0 its low bits give.
		{"LEB128 overflow", []byte{0x76, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, false, value{}, true},
		{"long LEB128", []byte{0x76, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, false, value{sym: true, reg: 6, off: -8}, false},
		{"unknown op", []byte{0xe0}, false, value{}, true},
		{"empty", nil, false, value{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := evalExpr(tt.expr, binary.LittleEndian, tt.pushCFA, 16, 0, false)
			if (err != nil) != tt.bad {
				t.Fatalf("err %v, want error %v", err, tt.bad)
			}
			if !tt.bad && v != tt.want {
				t.Errorf("got %+v, want %+v", v, tt.want)
			}
		})
	}
}

func TestSFramePieces(t *testing.T) {
	mk := func(pc emit.PCType, rep uint8, starts ...uint32) *emit.FDE {
		f := &emit.FDE{Info: emit.FuncInfo(pc, emit.FREAddr1, false, false), RepSize: rep}
		for _, s := range starts {
			f.FREs = append(f.FREs, fre(s, true, 8))
		}
		return f
	}
	tests := []struct {
		name string
		fde  *emit.FDE
		S, E uint64
		want []sfPiece
	}{
		{"inc", mk(emit.PCInc, 0, 0, 4, 9), 0x100, 0x110, []sfPiece{{0x100, 0x104, 0}, {0x104, 0x109, 1}, {0x109, 0x110, 2}}},
		{"inc first not at 0", mk(emit.PCInc, 0, 2), 0x100, 0x104, []sfPiece{{0x100, 0x102, -1}, {0x102, 0x104, 0}}},
		{"inc duplicate start", mk(emit.PCInc, 0, 0, 4, 4), 0, 8, []sfPiece{{0, 4, 0}, {4, 8, 2}}},
		{"inc unsorted", mk(emit.PCInc, 0, 0, 5, 3), 0, 10, []sfPiece{{0, 5, 0}, {5, 10, 2}}},
		{"inc start at size", mk(emit.PCInc, 0, 0, 4), 0, 4, []sfPiece{{0, 4, 0}}},
		{"mask", mk(emit.PCMask, 16, 0, 11), 0x1030, 0x1050, []sfPiece{
			{0x1030, 0x103b, 0}, {0x103b, 0x1040, 1}, {0x1040, 0x104b, 0}, {0x104b, 0x1050, 1}}},
		{"mask partial block", mk(emit.PCMask, 8, 0, 6), 0, 12, []sfPiece{{0, 6, 0}, {6, 8, 1}, {8, 12, 0}}},
		{"no FREs", mk(emit.PCInc, 0), 0, 8, []sfPiece{{0, 8, -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sframePieces(nil, tt.fde, tt.S, tt.E)
			if !ok || len(got) != len(tt.want) {
				t.Fatalf("got %v (ok %v), want %v", got, ok, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
	if _, ok := sframePieces(nil, mk(emit.PCMask, 1, 0), 0, 1<<32); ok {
		t.Error("4 GiB PCMASK function of 1-byte blocks accepted")
	}
}
