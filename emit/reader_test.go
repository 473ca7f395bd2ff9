package emit

import (
	"debug/elf"
	"errors"
	"path/filepath"
	"testing"
)

// linkedGoldens are GNU ld's outputs with SFrame (every ABI and layout of
// testdata/link).
func linkedGoldens(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.gs.so", "*.gs.exe"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "*", pat))
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d linked golden files", len(files))
	}
	return files
}

// TestReaderFindsEveryFRE looks up, in GNU ld's sections, the first PC of
// every FRE, the PC before the next one, and the PCs just outside each
// function, and checks the answers against the decoded section.
func TestReaderFindsEveryFRE(t *testing.T) {
	for _, path := range linkedGoldens(t) {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ReaderFromELF(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		s := r.Section()
		if r.NumFuncs() != s.NumFDEs() {
			t.Fatalf("%s: %d functions, %d FDEs", path, r.NumFuncs(), s.NumFDEs())
		}
		masks := 0
		for k := 0; k < r.NumFuncs(); k++ {
			fn := r.Func(k)
			if k > 0 && fn.Start < r.Func(k-1).Start {
				t.Fatalf("%s: functions not in address order at %d", path, k)
			}
			fde := fn.FDE
			if fde.PCType() == PCMask {
				masks++
			}
			increasing := true
			for j := 1; j < len(fde.FREs); j++ {
				increasing = increasing && fde.FREs[j].StartAddr > fde.FREs[j-1].StartAddr
			}
			for j, e := range fde.FREs {
				if !increasing {
					break // FRE starts out of order (gasmix): no lookup is defined
				}
				end := uint64(fde.Size)
				if fde.PCType() == PCMask {
					end = uint64(fde.RepSize)
				}
				if j+1 < len(fde.FREs) {
					end = uint64(fde.FREs[j+1].StartAddr)
				}
				for _, off := range []uint64{uint64(e.StartAddr), end - 1} {
					pc := fn.Start + off
					if off >= uint64(fde.Size) || off < uint64(e.StartAddr) || covering(r, pc) != 1 {
						continue // an FRE past its function's end, overlapping functions (gasmix)
					}
					l, ok := r.Lookup(pc)
					if !ok || l.Func != fn.Index || l.FRE != j || l.Start != fn.Start {
						t.Errorf("%s: Lookup(%#x) = %+v %v, want function %d FRE %d", path, pc, l, ok, fn.Index, j)
						continue
					}
					want, err := s.Header.Frame(fde, &fde.FREs[j])
					if err != nil || l.Frame != want {
						t.Errorf("%s: Lookup(%#x) frame %+v, want %+v (%v)", path, pc, l.Frame, want, err)
					}
				}
			}
			if fde.PCType() == PCMask && fde.RepSize > 0 && len(fde.FREs) > 0 && fde.Size > uint32(fde.RepSize) {
				// The second block matches as the first.
				pc := fn.Start + uint64(fde.RepSize) + uint64(fde.FREs[0].StartAddr)
				if l, ok := r.Lookup(pc); !ok || l.FRE != 0 {
					t.Errorf("%s: PCMASK Lookup(%#x) = %+v %v, want FRE 0", path, pc, l, ok)
				}
			}
			if _, _, ok := r.Find(fn.Start + uint64(fde.Size)); ok && (k+1 == r.NumFuncs() || r.Func(k+1).Start != fn.Start+uint64(fde.Size)) {
				t.Errorf("%s: Find past the end of function %d found one", path, fn.Index)
			}
		}
		if _, ok := r.Lookup(r.Func(0).Start - 1); ok {
			t.Errorf("%s: Lookup before the first function found one", path)
		}
		if masks == 0 && filepath.Base(path) == "lazy.gs.so" && filepath.Base(filepath.Dir(path)) == "x86_64" {
			t.Errorf("%s: no PCMASK function (the PLT's)", path)
		}
	}
}

// covering counts the functions of r whose range holds pc.
func covering(r *Reader, pc uint64) int {
	n := 0
	for k := 0; k < r.NumFuncs(); k++ {
		if fn := r.Func(k); fn.Start <= pc && pc-fn.Start < uint64(fn.FDE.Size) {
			n++
		}
	}
	return n
}

// frameCase is an FRE and what it means.
type frameCase struct {
	name string
	h    Header
	f    FDE
	e    FRE
	want Frame
	err  bool
}

// frameCases are FREs of each ABI and FDE type, and what they mean.
func frameCases() []frameCase {
	amd := Header{Version: Version3, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8}
	arm := Header{Version: Version3, ABI: ABIAArch64LittleEndian}
	s390 := Header{Version: Version3, ABI: ABIS390XBigEndian}
	s390v2 := Header{Version: Version2, ABI: ABIS390XBigEndian}
	def := FDE{}
	flex := FDE{Info2: uint8(FDEFlex)}
	signal := FDE{Info: FuncInfo(PCInc, FREAddr1, false, true)}
	rule := func(off int64) Loc { return Loc{Kind: LocRule, Offset: off, Deref: true} }
	reg := func(r uint32, off int64) Loc { return Loc{Kind: LocRule, RegBase: true, Reg: r, Offset: off} }
	fre := func(sp bool, mangled bool, w ...int32) FRE {
		return FRE{Info: FREInfo(sp, len(w), DataWord1B, mangled), Words: w}
	}
	fre4 := func(sp bool, w ...int32) FRE {
		return FRE{Info: FREInfo(sp, len(w), DataWord4B, false), Words: w}
	}
	return []frameCase{
		{"amd64 entry", amd, def, fre(true, false, 8), Frame{CFA: reg(7, 8), RA: rule(-8)}, false},
		{"amd64 rbp frame", amd, def, fre(false, false, 16, -16), Frame{CFA: reg(6, 16), RA: rule(-8), FP: rule(-16)}, false},
		{"amd64 wide offsets", amd, def, fre4(true, 0x12345678, -0x7654321), Frame{CFA: reg(7, 0x12345678), RA: rule(-8), FP: rule(-0x7654321)}, false},
		{"amd64 outermost", amd, def, FRE{Info: FREInfo(true, 0, DataWord1B, false)}, Frame{Outermost: true}, false},
		{"amd64 outermost signal", amd, signal, FRE{Info: FREInfo(true, 0, DataWord1B, true)}, Frame{Outermost: true, Signal: true}, false},
		{"amd64 signal", amd, signal, fre(true, false, 8), Frame{CFA: reg(7, 8), RA: rule(-8), Signal: true}, false},
		{"amd64 words left over", amd, def, fre(true, false, 8, -16, -24), Frame{CFA: reg(7, 8), RA: rule(-8), FP: rule(-16)}, true},
		{"aarch64 pauth", arm, def, fre(false, true, 16, -8, -16), Frame{CFA: reg(29, 16), RA: rule(-8), FP: rule(-16), RAMangled: true}, false},
		{"aarch64 no RA word", arm, def, fre(true, false, 0), Frame{CFA: reg(31, 0)}, false},
		{"aarch64 RA padding", arm, def, fre(true, false, 32, 0, -32), Frame{CFA: reg(31, 32), FP: rule(-32)}, false},
		{"aarch64 FP at CFA", arm, def, fre(true, false, 32, -8, 0), Frame{CFA: reg(31, 32), RA: rule(-8), FP: rule(0)}, false},
		{"s390x CFA offset", s390, def, fre(true, false, int32(S390XCFAOffsetEncode(160)), -48), Frame{CFA: reg(15, 160), RA: rule(-48)}, false},
		{"s390x CFA offset wider than its word", s390, def, fre(true, false, 100, -48, -56), Frame{CFA: reg(15, 100*8+160), RA: rule(-48), FP: rule(-56)}, false},
		{"s390x v2 RA in register", s390v2, def, fre(true, false, int32(S390XCFAOffsetEncode(160)), 7<<1|1), Frame{CFA: reg(15, 160), RA: Loc{Kind: LocRule, RegBase: true, Reg: 7}}, false},
		{"s390x v2 FP in register", s390v2, def, fre(true, false, int32(S390XCFAOffsetEncode(160)), -48, 11<<1|1), Frame{CFA: reg(15, 160), RA: rule(-48), FP: Loc{Kind: LocRule, RegBase: true, Reg: 11}}, false},
		{"flex CFA r10 deref", amd, flex, fre(true, false, int32(FlexControlWord(10, true, true)), 0), Frame{CFA: Loc{Kind: LocRule, RegBase: true, Reg: 10, Deref: true}, RA: rule(-8)}, false},
		{"flex FP in register", amd, flex, fre(true, false, int32(FlexControlWord(10, false, true)), 8, 0, int32(FlexControlWord(3, false, true)), 0), Frame{CFA: reg(10, 8), RA: rule(-8), FP: Loc{Kind: LocRule, RegBase: true, Reg: 3}}, false},
		{"flex without register", amd, flex, fre(true, false, int32(FlexControlWord(10, false, false)), 8), Frame{}, true},
		{"flex one word", amd, flex, fre(true, false, 1), Frame{}, true},
	}
}

// TestHeaderFrame checks what FREs mean for each ABI and FDE type.
func TestHeaderFrame(t *testing.T) {
	for _, tt := range frameCases() {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.h.Frame(&tt.f, &tt.e)
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if !tt.err && got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestReaderFrame: Reader.Lookup, which works out most FREs' meaning when
// it packs them, says of each FRE of frameCases what Header.Frame says,
// in a function of its own and in one of several FREs whose offsets need
// four bytes.
func TestReaderFrame(t *testing.T) {
	for _, tt := range frameCases() {
		t.Run(tt.name, func(t *testing.T) {
			wide := FRE{Info: FREInfo(true, 3, DataWord4B, false), Words: []int32{1 << 20, -1 << 20, 1 << 30}}
			if tt.h.CFAFixedRAOffset != 0 {
				wide = FRE{Info: FREInfo(true, 2, DataWord4B, false), Words: []int32{1 << 20, 1 << 30}}
			}
			e := tt.e
			e.StartAddr = 0x100
			s := mustSection(t, tt.h, []FDE{
				{Size: 0x10, Info: tt.f.Info, Info2: tt.f.Info2, FREs: []FRE{tt.e}},
				{Size: 0x200, Info: tt.f.Info | uint8(FREAddr2), Info2: tt.f.Info2, FREs: []FRE{wide, e}},
			})
			s.SetFuncStart(0, 0x1000, 0)
			s.SetFuncStart(1, 0x2000, 0)
			r, err := ReaderFor(s, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, pc := range []uint64{0x1000, 0x100f, 0x2100, 0x21ff} {
				l, ok := r.Lookup(pc)
				if ok == tt.err {
					t.Fatalf("Lookup(%#x): found %v, want error %v", pc, ok, tt.err)
				}
				if ok && l.Frame != tt.want {
					t.Errorf("Lookup(%#x) = %+v\nwant %+v", pc, l.Frame, tt.want)
				}
			}
		})
	}
}

// TestReaderUnsortedAndEmpty: a Reader sorts an index that is not in
// address order, and a section without functions answers nothing.
func TestReaderUnsortedAndEmpty(t *testing.T) {
	s := &Section{Header: Header{Version: Version3, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8}}
	e := FRE{Info: FREInfo(true, 1, DataWord1B, false), Words: []int32{8}}
	for _, start := range []uint64{0x2000, 0x1000} {
		if err := s.AppendFDE(FDE{Size: 0x10, FREs: []FRE{e}}); err != nil {
			t.Fatal(err)
		}
		s.SetFuncStart(s.NumFDEs()-1, start, 0x100)
	}
	r, err := ReaderFor(s, 0x100)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := r.Lookup(0x1008); !ok || l.Func != 1 || l.Start != 0x1000 {
		t.Errorf("Lookup(0x1008) = %+v %v, want function 1", l, ok)
	}
	if l, ok := r.Lookup(0x200f); !ok || l.Func != 0 {
		t.Errorf("Lookup(0x200f) = %+v %v, want function 0", l, ok)
	}
	for _, pc := range []uint64{0xfff, 0x1010, 0x1fff, 0x2010} {
		if _, ok := r.Lookup(pc); ok {
			t.Errorf("Lookup(%#x) found a function", pc)
		}
	}
	empty, err := ReaderFor(&Section{Header: s.Header}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := empty.Lookup(0); ok {
		t.Error("an empty section answered")
	}
	if _, err := ReaderFromELF(&elf.File{}); !errors.Is(err, ErrNoSFrame) {
		t.Errorf("ReaderFromELF without a section: %v", err)
	}
}

// TestLookupAllocatesNothing: Lookup is for a stack walker's hot path.
func TestLookupAllocatesNothing(t *testing.T) {
	f, err := elf.Open(linkedGoldens(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ReaderFromELF(f)
	if err != nil {
		t.Fatal(err)
	}
	pc := r.Func(r.NumFuncs()/2).Start + 1
	if n := testing.AllocsPerRun(100, func() { r.Lookup(pc) }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
}

// BenchmarkLookup looks up the first PC of every FRE of the biggest
// linked golden section, in address order.
func BenchmarkLookup(b *testing.B) {
	var best *Reader
	for _, p := range linkedGolden(b) {
		f, err := elf.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		r, err := ReaderFromELF(f)
		f.Close()
		if err == nil && (best == nil || r.NumFuncs() > best.NumFuncs()) {
			best = r
		}
	}
	pcs := lookupPCs(best)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		best.Lookup(pcs[i%len(pcs)])
	}
}

// lookupPCs is the first PC of every FRE of r, in address order.
func lookupPCs(r *Reader) []uint64 {
	var pcs []uint64
	for k := 0; k < r.NumFuncs(); k++ {
		fn := r.Func(k)
		for _, e := range fn.FDE.FREs {
			pcs = append(pcs, fn.Start+uint64(e.StartAddr))
		}
	}
	return pcs
}

func linkedGolden(b *testing.B) []string {
	m, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "*", "*.gs.exe"))
	if len(m) == 0 {
		b.Fatal("no linked golden files")
	}
	return m
}

// TestReaderPacking: functions far apart (a wide bucket table) and FREs
// whose starts and words need 1, 2 and 4 bytes, read back by Lookup as Header.Frame reads the section's.
func TestReaderPacking(t *testing.T) {
	s := &Section{Header: Header{Version: Version3, ABI: ABIAArch64LittleEndian}}
	fre := func(start uint32, words ...int32) FRE {
		return FRE{StartAddr: start, Info: FREInfo(true, len(words), DataWord4B, false), Words: words}
	}
	funcs := []struct {
		start uint64
		size  uint32
		fres  []FRE
	}{
		{0x1000, 0x10, []FRE{fre(0, 16), fre(4, 32, -8), fre(8, 48, -16, -24)}},
		{0x1010, 0x400, []FRE{fre(0, 16), fre(0x100, 0x1234, -0x200, 0), fre(0x3ff, -0x12345678, 8, 0x7fffffff)}},
		{0x1410, 0x20000, []FRE{fre(0, 16), fre(0x1ffff, 1<<20)}},
		{1 << 40, 0x100, []FRE{fre(0), fre(2, 16, -8, -16, 4)}}, // outermost; 4 words: an error
		{1<<62 + 3, 0x10, []FRE{fre(1, -128, 127, -32768)}},
	}
	for i, f := range funcs {
		if err := s.AppendFDE(FDE{Size: f.size, Info: uint8(FREAddr4), FREs: f.fres}); err != nil {
			t.Fatal(err)
		}
		s.SetFuncStart(i, f.start, 0)
	}
	r, err := ReaderFor(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range funcs {
		if _, ok := r.Lookup(f.start + uint64(f.size)); ok && i+1 < len(funcs) && funcs[i+1].start > f.start+uint64(f.size) {
			t.Errorf("function %d: the PC past its end found a function", i)
		}
		if f.fres[0].StartAddr > 0 {
			if _, ok := r.Lookup(f.start); ok {
				t.Errorf("function %d: a PC before its first FRE found one", i)
			}
		}
		for j, e := range f.fres {
			pc := f.start + uint64(e.StartAddr)
			fde, err := s.FDE(i)
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.Header.Frame(&fde, &f.fres[j])
			l, ok := r.Lookup(pc)
			if ok != (err == nil) {
				t.Errorf("function %d FRE %d: Lookup(%#x) ok %v, Frame error %v", i, j, pc, ok, err)
				continue
			}
			if ok && (l.Frame != want || l.Func != i || l.FRE != j || l.Start != f.start) {
				t.Errorf("function %d FRE %d: Lookup(%#x) = %+v, want %+v", i, j, pc, l, want)
			}
		}
	}
	if _, ok := r.Lookup(0xfff); ok {
		t.Error("a PC below every function found one")
	}
}

// TestReaderCovering: Covering finds the function of a PC whether or not
// it has an FRE for it (a signal trampoline kept without FREs, a PC
// before a function's first FRE), and nothing outside the functions.
func TestReaderCovering(t *testing.T) {
	s := &Section{Header: Header{Version: Version3, ABI: ABIAMD64LittleEndian, CFAFixedRAOffset: -8}}
	e := FRE{StartAddr: 4, Info: FREInfo(true, 1, DataWord1B, false), Words: []int32{8}}
	s = mustSection(t, s.Header, []FDE{
		{Size: 0x10, Info: FuncInfo(PCInc, FREAddr1, false, true)}, // a signal frame, no FREs
		{Size: 0x10, FREs: []FRE{e}},
	})
	s.SetFuncStart(0, 0x1000, 0x100)
	s.SetFuncStart(1, 0x2000, 0x100)
	r, err := ReaderFor(s, 0x100)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pc     uint64
		fde    int
		ok     bool
		lookup bool
	}{
		{0x1000, 0, true, false}, {0x100f, 0, true, false}, {0x2000, 1, true, false},
		{0x2004, 1, true, true}, {0xfff, 0, false, false}, {0x1010, 0, false, false}, {0x2010, 0, false, false},
	} {
		fn, ok := r.Covering(tc.pc)
		_, found := r.Lookup(tc.pc)
		if ok != tc.ok || ok && fn.Index != tc.fde || found != tc.lookup {
			t.Errorf("Covering(%#x) = FDE %d %v, Lookup %v; want FDE %d %v, Lookup %v", tc.pc, fn.Index, ok, found, tc.fde, tc.ok, tc.lookup)
		}
	}
	if fn, _ := r.Covering(0x1004); !fn.FDE.Signal() {
		t.Error("the signal bit of the FDE without FREs is not seen")
	}
	if empty, err := ReaderFor(&Section{Header: s.Header}, 0); err != nil {
		t.Fatal(err)
	} else if _, ok := empty.Covering(0); ok {
		t.Error("an empty section covers a PC")
	}
}

// TestReaderSharedBlocks: functions sharing a block of FREs in the
// section share one block in the Reader, and every lookup answers as in
// the section where each function has its own; a Reader that would need
// more than its limit for the blocks says so.
func TestReaderSharedBlocks(t *testing.T) {
	sharedAll := 0
	for _, path := range linkedGoldens(t) {
		raw, _, addr, ok := sframeOf(t, path)
		if !ok {
			continue
		}
		own, err := NewReader(raw, addr)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		shared, err := s.ShareFREs()
		if err != nil {
			t.Fatal(err)
		}
		r, err := ReaderFor(s, addr)
		if err != nil {
			t.Fatal(err)
		}
		sharedAll += shared
		if shared > 0 && len(r.blocks) >= len(own.blocks) {
			t.Errorf("%s: %d functions share blocks, the Reader's take %d bytes, %d unshared", path, shared, len(r.blocks), len(own.blocks))
		}
		for _, pc := range lookupPCs(own) {
			a, aok := own.Lookup(pc)
			b, bok := r.Lookup(pc)
			if aok != bok || a != b {
				t.Fatalf("%s: Lookup(%#x) = %+v %v shared, %+v %v not", path, pc, b, bok, a, aok)
			}
		}
		if _, err := readerFor(s, addr, len(r.blocks)-1); err == nil {
			t.Errorf("%s: no error for a limit below the blocks' size", path)
		}
	}
	if sharedAll == 0 {
		t.Error("no function of the goldens shares a block")
	}
}
