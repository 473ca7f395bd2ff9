package unwind

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// The synthetic program of the tests: one module at 0x1000-0x2000 (linked
// at 0, loaded with bias 0x1000), its stack at stackBase.
const (
	modStart  = 0x1000
	stackBase = 0x7f0000
	stackSize = 0x1000
)

// amd64Funcs: _start (outermost), main (SP-based, then RBP-based), leaf
// (SP+8), a PLT stub (PCMASK, 16-byte entries), __restore_rt (a signal
// frame without FREs, its FDE one byte before the trampoline as glibc's
// CFI has it) and a DRAP-style flex function.
func amd64Funcs() []fn {
	return []fn{
		{start: 0x100, size: 0x20, fres: []emit.FRE{outermost(0)}},
		{start: 0x200, size: 0x40, fres: []emit.FRE{fre(0, true, 8), fre(1, true, 16, -16), fre(4, false, 16, -16)}},
		{start: 0x300, size: 0x20, fres: []emit.FRE{fre(0, true, 8)}},
		{start: 0x400, size: 0x30, info: emit.FuncInfo(emit.PCMask, emit.FREAddr1, false, false), rep: 16,
			fres: []emit.FRE{fre(0, true, 8), fre(11, true, 16)}},
		{start: 0x4ff, size: 0x10, info: emit.FuncInfo(emit.PCInc, emit.FREAddr1, false, true)},
		{start: 0x600, size: 0x20, info2: uint8(emit.FDEFlex), fres: []emit.FRE{
			// CFA = *(RBP-8) (the DRAP slot), the caller's RBP at CFA-16.
			{StartAddr: 0, Info: emit.FREInfo(false, 6, emit.DataWord1B, false),
				Words: []int32{int32(emit.FlexControlWord(6, true, true)), -8, int32(emit.FlexControlWord(0, true, false)), -8,
					int32(emit.FlexControlWord(0, true, false)), -16}},
			// CFA = R10+0.
			{StartAddr: 8, Info: emit.FREInfo(false, 2, emit.DataWord1B, false),
				Words: []int32{int32(emit.FlexControlWord(10, false, true)), 0}},
		}},
	}
}

// walkCase is one synthetic stack.
type walkCase struct {
	name   string
	abi    emit.ABI
	funcs  []fn
	noSF   bool                               // the module has no .sframe
	setup  func(m *fakeMem, r *Regs)          // the stack and registers
	want   []uint64                           // frame PCs
	signal []int                              // frames that are signal frames
	end    Reason                             //
	check  func(t *testing.T, frames []Frame) // more checks
}

func amd64Cases() []walkCase {
	abi := emit.ABIAMD64LittleEndian
	S := uint64(stackBase + 0x800)
	return []walkCase{
		{name: "amd64/leaf-main-start", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x305
				r.Set(7, S)
				r.Set(6, S+0x10)
				m.put(S, modStart+0x220)      // leaf's RA, into main
				m.put(S+0x10, 0)              // main's saved RBP
				m.put(S+0x18, modStart+0x110) // main's RA, into _start
			},
			want: []uint64{modStart + 0x305, modStart + 0x220, modStart + 0x110}, end: EndOutermost},
		{name: "amd64/main-prologue", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x201 // after push %rbp: CFA = RSP+16
				r.Set(7, S)
				m.put(S, 0x1234)
				m.put(S+8, modStart+0x110)
			},
			want: []uint64{modStart + 0x201, modStart + 0x110}, end: EndOutermost},
		{name: "amd64/plt-pcmask", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x41c // entry 1, offset 12: CFA = RSP+16
				r.Set(7, S)
				m.put(S+8, modStart+0x220)
				r.Set(6, S+0x20)
				m.put(S+0x28, modStart+0x110)
			},
			want: []uint64{modStart + 0x41c, modStart + 0x220, modStart + 0x110}, end: EndOutermost},
		{name: "amd64/signal-fde", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				// The handler (leaf) returns to __restore_rt; the
				// signal interrupted main's prologue (CFA = RSP+16).
				r.PC = modStart + 0x300
				r.Set(7, S)
				m.put(S, modStart+0x500)
				mc := S + 8 + amd64Mcontext
				m.put(mc+amd64RIP, modStart+0x202)
				m.put(mc+amd64RSP, S+0x100)
				m.put(S+0x108, modStart+0x110)
			},
			want: []uint64{modStart + 0x300, modStart + 0x500, modStart + 0x202, modStart + 0x110}, signal: []int{1}, end: EndOutermost},
		{name: "amd64/signal-trampoline-bytes", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				// The trampoline in no module (a sigtramp page).
				m.region(0x9000, 0x10)
				m.putBytes(0x9000, amd64Sigreturn)
				r.PC = modStart + 0x300
				r.Set(7, S)
				m.put(S, 0x9000)
				mc := S + 8 + amd64Mcontext
				m.put(mc+amd64RIP, modStart+0x305)
				m.put(mc+amd64RSP, S+0x100)
				m.put(S+0x100, modStart+0x110)
			},
			want: []uint64{modStart + 0x300, 0x9000, modStart + 0x305, modStart + 0x110}, signal: []int{1}, end: EndOutermost},
		{name: "amd64/flex-drap", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x604
				r.Set(7, S)
				r.Set(6, S+0x40)
				m.put(S+0x38, S+0x100) // CFA = *(RBP-8)
				m.put(S+0xf0, 0x5555)  // caller's RBP at CFA-16
				m.put(S+0xf8, modStart+0x110)
			},
			want: []uint64{modStart + 0x604, modStart + 0x110}, end: EndOutermost,
			check: func(t *testing.T, fs []Frame) {
				if fs[1].SP != S+0x100 {
					t.Errorf("caller SP %#x, want %#x", fs[1].SP, S+0x100)
				}
			}},
		{name: "amd64/flex-register-in-outer-frame", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x305
				r.Set(7, S)
				m.put(S, modStart+0x60c) // returns into the R10-based row
			},
			want: []uint64{modStart + 0x305, modStart + 0x60c}, end: EndRegister},
		{name: "amd64/memory", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x305
				r.Set(7, 0x10)
			},
			want: []uint64{modStart + 0x305}, end: EndMemory},
		{name: "amd64/no-module", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) { r.PC = 0x99; r.Set(7, S) },
			want:  []uint64{0x99}, end: EndNoModule},
		{name: "amd64/no-fre", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) { r.PC = modStart + 0x700; r.Set(7, S) },
			want:  []uint64{modStart + 0x700}, end: EndNoFRE},
		{name: "amd64/no-sframe", abi: abi, funcs: amd64Funcs(), noSF: true,
			setup: func(m *fakeMem, r *Regs) { r.PC = modStart + 0x305; r.Set(7, S) },
			want:  []uint64{modStart + 0x305}, end: EndNoSFrame},
		{name: "amd64/zero-ra", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) { r.PC = modStart + 0x305; r.Set(7, S) },
			want:  []uint64{modStart + 0x305}, end: EndZeroRA},
		{name: "amd64/loop", abi: abi, funcs: amd64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				// main's frame pointer points at itself: the same frame again.
				r.PC = modStart + 0x220
				r.Set(7, S)
				r.Set(6, S)
				m.put(S, S-0x10)
				m.put(S+8, modStart+0x220)
				m.put(S-0x10, S-0x10)
				m.put(S-8, modStart+0x220)
			},
			want: []uint64{modStart + 0x220, modStart + 0x220}, end: EndStackOrder},
	}
}

// aarch64Funcs: _start (outermost), caller (frame record, signed RA),
// leaf (RA still in x30), and a function whose RA rule says "in x30" at a
// call site (which an outer frame cannot use).
func aarch64Funcs() []fn {
	return []fn{
		{start: 0x100, size: 0x20, fres: []emit.FRE{outermost(0)}},
		{start: 0x200, size: 0x40, fres: []emit.FRE{fre(0, true, 0), mangled(fre(4, true, 16, -8, -16)), mangled(fre(8, false, 16, -8, -16))}},
		{start: 0x300, size: 0x20, fres: []emit.FRE{fre(0, true, 0)}},
		{start: 0x400, size: 0x20, fres: []emit.FRE{fre(0, true, 0)}},
	}
}

func aarch64Cases(abi emit.ABI) []walkCase {
	S := uint64(stackBase + 0x800)
	name := "aarch64le/"
	if abi == emit.ABIAArch64BigEndian {
		name = "aarch64be/"
	}
	return []walkCase{
		{name: name + "leaf-lr-signed", abi: abi, funcs: aarch64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x304
				r.Set(31, S)
				r.Set(30, modStart+0x210) // into caller, past its frame record
				r.Set(29, S+0x10)
				m.put(S+0x10, 0)                         // caller's saved x29
				m.put(S+0x18, 0x002a<<48|modStart+0x110) // signed RA into _start
			},
			want: []uint64{modStart + 0x304, modStart + 0x210, modStart + 0x110}, end: EndOutermost},
		{name: name + "ra-in-register-outer", abi: abi, funcs: aarch64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x304
				r.Set(31, S)
				r.Set(30, modStart+0x408)
			},
			want: []uint64{modStart + 0x304, modStart + 0x408}, end: EndRAInRegister},
		{name: name + "signal", abi: abi, funcs: aarch64Funcs(),
			setup: func(m *fakeMem, r *Regs) {
				m.region(0x9000, 0x10)
				m.putBytes(0x9000, aarch64Sigreturn)
				r.PC = modStart + 0x300
				r.Set(31, S)
				r.Set(30, 0x9000)
				regs := S + aarch64Regs
				m.put(regs+8*30, modStart+0x210) // the interrupted leaf's x30
				m.put(regs+8*31, S+0x200)        // sp
				m.put(regs+8*32, modStart+0x308) // pc
				m.put(regs+8*29, S+0x210)
				m.put(S+0x218, modStart+0x110)
			},
			want: []uint64{modStart + 0x300, 0x9000, modStart + 0x308, modStart + 0x210, modStart + 0x110}, signal: []int{1}, end: EndOutermost},
	}
}

// s390xFuncs: _start (outermost), caller (stmg of r11-r15: RA at CFA-48,
// FP at CFA-72, then a 160-byte frame), leaf (RA in r14).
func s390xFuncs() []fn {
	return []fn{
		{start: 0x100, size: 0x20, fres: []emit.FRE{outermost(0)}},
		{start: 0x200, size: 0x40, fres: []emit.FRE{fre(0, true, s390xCFA(160)), fre(6, true, s390xCFA(320), -48, -72)}},
		{start: 0x300, size: 0x20, fres: []emit.FRE{fre(0, true, s390xCFA(160))}},
	}
}

func s390xCases() []walkCase {
	abi := emit.ABIS390XBigEndian
	S := uint64(stackBase + 0x400)
	return []walkCase{
		{name: "s390x/leaf-r14", abi: abi, funcs: s390xFuncs(),
			setup: func(m *fakeMem, r *Regs) {
				r.PC = modStart + 0x302
				r.Set(15, S)
				r.Set(14, modStart+0x220)
				m.put(S+320-48, modStart+0x110)
				m.put(S+320-72, 0x77)
			},
			want: []uint64{modStart + 0x302, modStart + 0x220, modStart + 0x110}, end: EndOutermost,
			check: func(t *testing.T, fs []Frame) {
				if fs[1].SP != S || fs[2].SP != S+160 {
					t.Errorf("SPs %#x %#x, want %#x %#x (CFA-160)", fs[1].SP, fs[2].SP, S, S+160)
				}
			}},
		{name: "s390x/rt-signal", abi: abi, funcs: s390xFuncs(),
			setup: func(m *fakeMem, r *Regs) {
				m.region(0x9000, 0x10)
				m.putBytes(0x9000, s390xRTSigreturn)
				r.PC = modStart + 0x300
				r.Set(15, S)
				r.Set(14, 0x9000)
				sr := S + s390xRTSigregs
				m.put(sr+s390xSigregsPSWA, modStart+0x208)
				m.put(sr+s390xSigregsGPRs+8*15, S+0x100)
				m.put(S+0x100+320-48, modStart+0x110)
			},
			want: []uint64{modStart + 0x300, 0x9000, modStart + 0x208, modStart + 0x110}, signal: []int{1}, end: EndOutermost},
		{name: "s390x/old-signal", abi: abi, funcs: s390xFuncs(),
			setup: func(m *fakeMem, r *Regs) {
				m.region(0x9000, 0x10)
				m.putBytes(0x9000, s390xSigreturn)
				r.PC = modStart + 0x300
				r.Set(15, S)
				r.Set(14, 0x9000)
				sr := S + 0x300
				m.put(S+s390xSigcontext+8, sr)
				m.put(sr+s390xSigregsPSWA, modStart+0x302)
				m.put(sr+s390xSigregsGPRs+8*15, S+0x100)
				m.put(sr+s390xSigregsGPRs+8*14, modStart+0x110)
			},
			want: []uint64{modStart + 0x300, 0x9000, modStart + 0x302, modStart + 0x110}, signal: []int{1}, end: EndOutermost},
	}
}

// TestWalk walks synthetic stacks of every ABI.
func TestWalk(t *testing.T) {
	var cases []walkCase
	cases = append(cases, amd64Cases()...)
	cases = append(cases, aarch64Cases(emit.ABIAArch64LittleEndian)...)
	cases = append(cases, aarch64Cases(emit.ABIAArch64BigEndian)...)
	cases = append(cases, s390xCases()...)
	for _, tc := range cases {
		// Each case is walked twice by one Walker (the second walk from
		// its cached lookups), also through a memory that reads at most
		// 16 bytes at once (the Walker's reads of whole blocks fail).
		for _, v := range []struct {
			name  string
			wordy bool
		}{{"", false}, {"/again", false}, {"/words", true}, {"/words-again", true}} {
			t.Run(tc.name+v.name, func(t *testing.T) { walkCase1(t, tc, v.wordy, strings.HasSuffix(v.name, "again")) })
		}
	}
}

// wordMem reads at most 16 bytes at once.
type wordMem struct{ *fakeMem }

func (m wordMem) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > 16 {
		return 0, errors.New("a read of more than 16 bytes")
	}
	return m.fakeMem.ReadAt(p, off)
}

// walkCase1 walks tc's stack (twice with again) and checks the frames.
func walkCase1(t *testing.T, tc walkCase, wordy, again bool) {
	m := newMem(tc.abi)
	m.region(stackBase, stackSize)
	mod := Module{Name: "prog", Start: modStart, End: modStart + 0x1000, Bias: modStart}
	if !tc.noSF {
		mod.SFrame = reader(t, tc.abi, tc.funcs...)
	}
	var mem io.ReaderAt = m
	if wordy {
		mem = wordMem{m}
	}
	w, err := New(tc.abi, mem, []Module{mod})
	if err != nil {
		t.Fatal(err)
	}
	var r Regs
	tc.setup(m, &r)
	frames, end := w.Walk(&r, nil)
	if again {
		frames, end = w.Walk(&r, frames[:0])
	}
	var pcs []uint64
	var sigs []int
	for i, f := range frames {
		pcs = append(pcs, f.PC)
		if f.Signal {
			sigs = append(sigs, i)
		}
	}
	if !slices.Equal(pcs, tc.want) || end.Reason != tc.end {
		t.Errorf("frames %#x, end %v\nwant   %#x, end %v", pcs, end, tc.want, tc.end)
	}
	if !slices.Equal(sigs, tc.signal) {
		t.Errorf("signal frames %v, want %v", sigs, tc.signal)
	}
	if tc.check != nil && len(frames) == len(tc.want) {
		tc.check(t, frames)
	}
}

// TestWalkReadsBlocks: a walk reads the stack a block at a time, not a
// word at a time, and a second walk reads the memory again (it may have
// changed), not the first walk's blocks.
func TestWalkReadsBlocks(t *testing.T) {
	tc := amd64Cases()[0] // leaf, main, _start: three words read
	m := newMem(tc.abi)
	m.region(stackBase, stackSize)
	cm := &countMem{fakeMem: m}
	w, err := New(tc.abi, cm, []Module{{Name: "prog", Start: modStart, End: modStart + 0x1000, Bias: modStart, SFrame: reader(t, tc.abi, tc.funcs...)}})
	if err != nil {
		t.Fatal(err)
	}
	var r Regs
	tc.setup(m, &r)
	frames, _ := w.Walk(&r, nil)
	if len(frames) != 3 || cm.reads != 1 {
		t.Errorf("%d frames in %d reads, want 3 in 1", len(frames), cm.reads)
	}
	S := uint64(stackBase + 0x800)
	m.put(S, modStart+0x110) // leaf returns to _start now
	frames, _ = w.Walk(&r, frames[:0])
	if len(frames) != 2 || frames[1].PC != modStart+0x110 {
		t.Errorf("after the stack changed: frames %+v, want 2, the second at %#x", frames, modStart+0x110)
	}
}

// countMem counts reads.
type countMem struct {
	*fakeMem
	reads int
}

func (m *countMem) ReadAt(p []byte, off int64) (int, error) {
	m.reads++
	return m.fakeMem.ReadAt(p, off)
}

// TestWalkAllocatesNothing walks a stack into a reused slice.
func TestWalkAllocatesNothing(t *testing.T) {
	tc := amd64Cases()[3] // through a signal frame
	m := newMem(tc.abi)
	m.region(stackBase, stackSize)
	w, err := New(tc.abi, m, []Module{{Name: "prog", Start: modStart, End: modStart + 0x1000, Bias: modStart, SFrame: reader(t, tc.abi, tc.funcs...)}})
	if err != nil {
		t.Fatal(err)
	}
	var r Regs
	tc.setup(m, &r)
	frames := make([]Frame, 0, 16)
	allocs := testing.AllocsPerRun(100, func() { frames, _ = w.Walk(&r, frames[:0]) })
	if allocs != 0 || len(frames) != 4 {
		t.Errorf("%v allocations per walk of %d frames, want 0 of 4", allocs, len(frames))
	}
}

// TestNewRejects checks New's errors.
func TestNewRejects(t *testing.T) {
	m := newMem(emit.ABIAMD64LittleEndian)
	for _, tc := range []struct {
		name string
		abi  emit.ABI
		mods []Module
	}{
		{"abi", emit.ABI(9), nil},
		{"empty", emit.ABIAMD64LittleEndian, []Module{{Name: "a", Start: 5, End: 5}}},
		{"overlap", emit.ABIAMD64LittleEndian, []Module{{Name: "a", Start: 0, End: 10}, {Name: "b", Start: 5, End: 20}}},
	} {
		if _, err := New(tc.abi, m, tc.mods); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestModuleAt finds the module of addresses in, between, before and after
// modules, in any order (the last answer is tried first), as its index in
// the slice given to New (which is not in address order here).
func TestModuleAt(t *testing.T) {
	mods := []Module{{Name: "c", Start: 0x5000, End: 0x6000}, {Name: "a", Start: 0x1000, End: 0x2000}, {Name: "b", Start: 0x2000, End: 0x3000}}
	w, err := New(emit.ABIAMD64LittleEndian, newMem(emit.ABIAMD64LittleEndian), mods)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr uint64
		name string
	}{
		{0x1000, "a"}, {0x1fff, "a"}, {0x2000, "b"}, {0x5fff, "c"}, {0x2fff, "b"}, {0xfff, ""}, {0x3000, ""},
		{0x4fff, ""}, {0x6000, ""}, {0x5000, "c"}, {0x1800, "a"}, {^uint64(0), ""}, {0, ""},
	} {
		i := w.ModuleAt(tc.addr)
		name := ""
		if i >= 0 {
			name = mods[i].Name
		}
		if name != tc.name {
			t.Errorf("ModuleAt(%#x) = %d (%q), want %q", tc.addr, i, name, tc.name)
		}
	}
}

// TestModulesCallersOrder checks that a walk's frames and Walker.Modules
// index the modules in the order given to New, not in address order, and
// that changing the caller's slice after New changes nothing.
func TestModulesCallersOrder(t *testing.T) {
	abi := emit.ABIAMD64LittleEndian
	prog := Module{Name: "prog", Start: modStart, End: modStart + 0x1000, Bias: modStart, SFrame: reader(t, abi, amd64Funcs()...)}
	low := Module{Name: "low", Start: 0x100, End: 0x800}
	mods := []Module{prog, low} // prog is second in address order
	w, err := New(abi, newMem(abi), mods)
	if err != nil {
		t.Fatal(err)
	}
	mods[0].Name = "changed"
	var r Regs
	r.PC = modStart + 0x305
	r.Set(7, stackBase+0x800)
	frames, _ := w.Walk(&r, nil)
	if len(frames) == 0 || frames[0].Module != 0 {
		t.Fatalf("frames %+v: want the first in module 0 (prog)", frames)
	}
	if got := w.Modules(); len(got) != 2 || got[0].Name != "prog" || got[1].Name != "low" {
		t.Errorf("Modules() = %+v, want prog, low", got)
	}
	if w.ModuleAt(0x200) != 1 {
		t.Errorf("ModuleAt(0x200) = %d, want 1", w.ModuleAt(0x200))
	}
}

// TestRegsSet checks that Set refuses what Get refuses: a register number
// not below NumRegs, without changing anything.
func TestRegsSet(t *testing.T) {
	var r Regs
	if !r.Set(NumRegs-1, 5) {
		t.Errorf("Set(%d) = false", NumRegs-1)
	}
	if v, ok := r.Get(NumRegs - 1); !ok || v != 5 {
		t.Errorf("Get(%d) = %d, %v", NumRegs-1, v, ok)
	}
	before := r
	for _, n := range []uint32{NumRegs, 40, ^uint32(0)} {
		if r.Set(n, 7) {
			t.Errorf("Set(%d) = true", n)
		}
		if _, ok := r.Get(n); ok {
			t.Errorf("Get(%d) ok", n)
		}
	}
	if r != before {
		t.Errorf("Set of a bad register changed the registers")
	}
}
