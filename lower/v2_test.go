package lower

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// fre2 is an FRE with 2-byte data words.
func fre2(start uint32, baseSP bool, words ...int32) emit.FRE {
	return emit.FRE{StartAddr: start, Info: emit.FREInfo(baseSP, len(words), emit.DataWord2B, false), Words: words}
}

func ctl(reg uint32, deref, regP bool) int32 { return int32(emit.FlexControlWord(reg, deref, regP)) }

func TestV2Refusal(t *testing.T) {
	amd64, _ := TargetByName("x86_64")
	s390x, _ := TargetByName("s390x")
	flex := func(fres ...emit.FRE) emit.FDE {
		return emit.FDE{Size: 64, Info: emit.FuncInfo(emit.PCInc, emit.FREAddr1, false, false), Info2: uint8(emit.FDEFlex), FREs: fres}
	}
	def := func(fres ...emit.FRE) emit.FDE {
		return emit.FDE{Size: 64, Info: emit.FuncInfo(emit.PCInc, emit.FREAddr1, false, false), FREs: fres}
	}
	signal := def(fre2(0, true, 8))
	signal.Info = emit.FuncInfo(emit.PCInc, emit.FREAddr1, false, true)
	for _, c := range []struct {
		name   string
		t      Target
		layout V2Layout
		fde    emit.FDE
		want   string // "" or a part of the reason
	}{
		{"default", amd64, V2PCRel, def(fre2(0, true, 8), fre2(1, true, 16, -16)), ""},
		{"drap", amd64, V2PCRel, flex(fre2(0, true, ctl(10, true, true), 0)), "CFA loaded from memory"},
		{"cfa r10", amd64, V2PCRel, flex(fre2(0, true, ctl(7, false, true), 8), fre2(4, true, ctl(10, false, true), 0)), "CFA based on register 10"},
		{"ra in reg", amd64, V2PCRel, flex(fre2(0, true, ctl(7, false, true), 8, ctl(11, false, true), 0)), "RA saved in register 11"},
		{"ra slot", amd64, V2PCRel, flex(fre2(0, true, ctl(7, false, true), 16, ctl(0, true, false), -16)), "RA saved at CFA-16, not at the fixed CFA-8"},
		{"fp in reg", amd64, V2PCRel, flex(fre2(0, true, ctl(7, false, true), 8, 0, ctl(3, false, true), 0)), "FP saved in register 3"},
		{"fp val", amd64, V2PCRel, flex(fre2(0, true, ctl(7, false, true), 8, 0, ctl(0, false, false), -16)), "FP is the CFA plus an offset"},
		{"signal", amd64, V2PCRel, signal, "signal frame"},
		{"outermost 2.45", amd64, V2PCRel, def(fre2(0, true, 8), emit.FRE{StartAddr: 4}), ""},
		{"outermost 2.44", amd64, V2Binutils244, def(fre2(0, true, 8), emit.FRE{StartAddr: 4}), "outermost frame"},
		{"s390x fp in f0", s390x, V2PCRel, flex(fre2(0, true, ctl(15, false, true), 0), fre2(18, true, ctl(15, false, true), 0, 0, ctl(16, false, true), 0)), ""},
		{"s390x cfa deref", s390x, V2PCRel, flex(fre2(0, true, ctl(15, true, true), 0)), "CFA loaded from memory"},
		{"s390x fp offset from reg", s390x, V2PCRel, flex(fre2(0, true, ctl(15, false, true), 0, 0, ctl(16, true, true), 8)), "FP saved at an offset from register 16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := V2Refusal(c.t, c.layout, &c.fde)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("V2Refusal = %q, want %q", got, c.want)
			}
			if got != "" && !strings.HasPrefix(got, "SFrame version 2 cannot express it: ") {
				t.Errorf("reason %q lacks the prefix", got)
			}
		})
	}
}

// TestS390XDefault checks the s390x flex FDEs version 2 writes as default
// FDEs with register-number words, and what they become.
func TestS390XDefault(t *testing.T) {
	s390x, _ := TargetByName("s390x")
	amd64, _ := TargetByName("x86_64")
	flex := func(fres ...emit.FRE) emit.FDE {
		return emit.FDE{Size: 64, Info: emit.FuncInfo(emit.PCInc, emit.FREAddr1, false, false), Info2: uint8(emit.FDEFlex), FREs: fres}
	}
	for _, c := range []struct {
		name string
		t    Target
		fde  emit.FDE
		want string // the FREs' words and info bytes; "" when not convertible
	}{
		{"fp in f0", s390x, flex(fre2(0, true, ctl(15, false, true), 0), fre2(18, true, ctl(15, false, true), 0, 0, ctl(16, false, true), 0)),
			"0:0x03[0] 18:0x07[0 0 33]"},
		{"ra and fp on stack, fp base", s390x, flex(fre2(0, false, ctl(11, false, true), 20, ctl(0, true, false), -48, ctl(0, true, false), -72)),
			"0:0x06[20 -48 -72]"},
		{"ra in r1", s390x, flex(fre2(0, true, ctl(15, false, true), 2, ctl(1, false, true), 0)),
			"0:0x05[2 3]"},
		{"outermost", s390x, flex(fre2(0, true, ctl(15, false, true), 0), emit.FRE{StartAddr: 6}),
			"0:0x03[0] 6:0x00[]"},
		{"cfa r10", s390x, flex(fre2(0, true, ctl(10, false, true), 0)), ""},
		{"odd stack slot", s390x, flex(fre2(0, true, ctl(15, false, true), 0, ctl(0, true, false), -47)), ""},
		{"reg plus offset", s390x, flex(fre2(0, true, ctl(15, false, true), 0, ctl(1, false, true), 8)), ""},
		{"amd64", amd64, flex(fre2(0, true, ctl(7, false, true), 8)), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, ok := s390xDefault(c.t, &c.fde)
			if !ok {
				if c.want != "" {
					t.Fatalf("not converted, want %s", c.want)
				}
				return
			}
			if c.want == "" {
				t.Fatalf("converted, want refused")
			}
			if g.Type() != emit.FDEDefault {
				t.Errorf("FDE type %v", g.Type())
			}
			var parts []string
			for _, e := range g.FREs {
				parts = append(parts, fmt.Sprintf("%d:%#02x%v", e.StartAddr, e.Info, e.Words))
			}
			if got := strings.Join(parts, " "); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
			sec, err := emit.NewSection(s390x.V2Header(V2PCRel), []emit.FDE{g})
			if err == nil {
				_, err = sec.Encode()
			}
			if err != nil {
				t.Errorf("Encode: %v", err)
			}
		})
	}
}

// TestV2ObjectPadding: an s390x object's section is padded to a multiple
// of 8 bytes (s390 gas's md_section_align) in version 2 as in version 3:
// the padding is that of the size of the version written, not of the
// version 3 layout (7f01c9e wrote addr2.o's version 2 section in 71 bytes,
// padded as its version 3 size would be).
func TestV2ObjectPadding(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "gas", "s390x", "*.o"))
	n := 0
	for _, name := range files {
		f, tg, frames, ok := openLowerable(name)
		if !ok {
			continue
		}
		for _, v := range []uint8{emit.Version3, emit.Version2} {
			res, _, err := LowerFile(f, frames, tg, Options{Version: v})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			b, err := res.Section.Encode()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(b)%8 != 0 || len(res.Section.Trailer) >= 8 {
				t.Errorf("%s, version %d: %d bytes (%d of padding), not a multiple of 8", name, v, len(b), len(res.Section.Trailer))
			}
		}
		f.Close()
		n++
	}
	if n < 5 {
		t.Fatalf("only %d s390x objects", n)
	}
}
