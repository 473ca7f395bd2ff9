package main

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/unwind"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
)

// recordedStack is one thread of a core, its memory copied into the
// process: what both unwinders of BenchmarkStackWalk walk.
type recordedStack struct {
	mem  *memSnapshot
	mods []*target.Module
	regs unwind.Regs
}

// memSnapshot is a core's memory held in memory (PT_LOAD contents), so
// that the benchmark measures the unwinders, not file reads.
type memSnapshot struct {
	starts []uint64
	data   [][]byte
}

// ReadAt reads the bytes at virtual address addr.
func (m *memSnapshot) ReadAt(p []byte, addr int64) (int, error) {
	a := uint64(addr)
	i, _ := slices.BinarySearch(m.starts, a+1)
	if i == 0 {
		return 0, errNotInCore
	}
	d := m.data[i-1]
	off := a - m.starts[i-1]
	if off+uint64(len(p)) > uint64(len(d)) {
		return 0, errNotInCore
	}
	return copy(p, d[off:]), nil
}

var errNotInCore = errors.New("address not in the core")

// snapshot copies the memory of the core file at path (its PT_LOAD
// segments, in address order).
func snapshot(tb testing.TB, path string) *memSnapshot {
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	segs := slices.Clone(f.Progs)
	slices.SortFunc(segs, func(a, b *elf.Prog) int { return cmpU64(a.Vaddr, b.Vaddr) })
	m := &memSnapshot{}
	for _, s := range segs {
		if s.Type != elf.PT_LOAD {
			continue
		}
		b := make([]byte, s.Filesz)
		if _, err := s.ReadAt(b, 0); err != nil && len(b) > 0 { // a segment of no bytes reads as EOF
			tb.Fatal(err)
		}
		m.starts, m.data = append(m.starts, s.Vaddr), append(m.data, b)
	}
	return m
}

func cmpU64(a, b uint64) int { return cmp.Compare(a, b) }

// located returns the modules of mods the walk uses (those found, with an
// extent), as unwind.New takes them.
func located(mods []*target.Module) []unwind.Module {
	var out []unwind.Module
	for _, m := range mods {
		if m.End > m.Start {
			out = append(out, unwind.Module{Name: m.Name, Start: m.Start, End: m.End, Bias: m.Bias, SFrame: m.SFrame})
		}
	}
	return out
}

// recordStacks stops workloads of testdata/stack at random moments and
// records every thread's stack.
func recordStacks(tb testing.TB, perProgram int) []recordedStack {
	var stacks []recordedStack
	for _, name := range []string{"recurse-O0", "qsortcb", "exceptions", "sighandler", "libs", "threads"} {
		var prog stackProgram
		for _, p := range stackPrograms {
			if p.name == name {
				prog = p
			}
		}
		core, _, _ := nativeCore(tb, prog)
		cores := []string{core}
		for len(cores) < perProgram {
			c, _, _ := nativeCore(tb, prog)
			cores = append(cores, c)
		}
		for _, c := range cores {
			p, err := target.OpenCore(c, target.Options{})
			if err != nil {
				tb.Fatal(err)
			}
			mem := snapshot(tb, c)
			p.Close()
			for _, t := range p.Threads {
				stacks = append(stacks, recordedStack{mem: mem, mods: p.Modules, regs: t.Regs})
			}
		}
	}
	return stacks
}

// BenchmarkStackWalk walks the same recorded stacks (x86-64 cores of six
// workloads, every module patched) with SFrame (emit/unwind) and with
// DWARF CFI (dwarfWalker: the FDE found by binary search, as through
// .eh_frame_hdr, its instructions executed up to the PC, the rules
// applied), and reports frames per second of each. Both walks must give
// the same frames.
//
//	go test ./cmd/sframe-gen -run '^$' -bench StackWalk
func BenchmarkStackWalk(b *testing.B) {
	stacks := recordStacks(b, 3)
	type walkers struct {
		sf *unwind.Walker
		dw *dwarfWalker
	}
	ws := make([]walkers, len(stacks))
	for i, s := range stacks {
		w, err := unwind.New(emit.ABIAMD64LittleEndian, s.mem, located(s.mods))
		if err != nil {
			b.Fatal(err)
		}
		ws[i] = walkers{w, newDwarfWalker(b, emit.ABIAMD64LittleEndian, s.mem, s.mods)}
	}
	// The two agree, frame for frame.
	total := 0
	var frames []unwind.Frame
	var pcs []uint64
	for i, s := range stacks {
		frames, _ = ws[i].sf.Walk(&s.regs, frames[:0])
		pcs = ws[i].dw.walk(&s.regs, pcs[:0])
		if len(frames) != len(pcs) {
			b.Fatalf("stack %d: SFrame %d frames, DWARF %d", i, len(frames), len(pcs))
		}
		for k := range frames {
			if frames[k].PC != pcs[k] {
				b.Fatalf("stack %d frame %d: SFrame %#x, DWARF %#x", i, k, frames[k].PC, pcs[k])
			}
		}
		total += len(frames)
	}
	b.Logf("%d stacks, %d frames", len(stacks), total)
	b.Run("sframe", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			for i := range stacks {
				frames, _ = ws[i].sf.Walk(&stacks[i].regs, frames[:0])
			}
		}
		b.ReportMetric(float64(total*b.N)/time.Since(start).Seconds(), "frames/s")
	})
	b.Run("dwarf-cfi", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			for i := range stacks {
				pcs = ws[i].dw.walk(&stacks[i].regs, pcs[:0])
			}
		}
		b.ReportMetric(float64(total*b.N)/time.Since(start).Seconds(), "frames/s")
	})
}

// dwarfWalker is the DWARF CFI baseline of BenchmarkStackWalk, and the
// independent check of the s390x frames past gdb's last one in
// TestStackAgainstGDB: an unwinder that, at each frame, finds the PC's FDE
// and executes its CIE's and its own instructions up to the PC
// (cfi.RowIterator), then applies the row's CFA and register rules, as
// libgcc's and libunwind's DWARF unwinders do (without their caches). It
// reads .eh_frame, not .sframe.
type dwarfWalker struct {
	abi   emit.ABI
	order binary.ByteOrder
	mem   io.ReaderAt
	mods  []dwarfModule
	buf   [8]byte
	// s390x: the caller's %r15 by the CFI's rule, compared with CFA-160
	// (spChecked, spDiffer), or taken as CFA-160, the ABI's definition of
	// the CFA (the caller's %r15 + 160), where the rule names a register
	// the core does not hold (spFromCFA: %f0, qemu's cores have no
	// NT_FPREGSET) or there is no rule (spNoRule).
	spChecked, spDiffer, spFromCFA, spNoRule int
	// spDifferAt: in the last walk, the frames whose caller's %r15 by the
	// CFI's rule was not CFA-160.
	spDifferAt []int
}

// dwarfModule is one module's CFI, its FDEs in address order.
type dwarfModule struct {
	start, end, bias uint64
	frames           *cfi.Frames
	fdes             []*cfi.FDE
	rows             *cfi.RowIterator
}

func newDwarfWalker(tb testing.TB, abi emit.ABI, mem io.ReaderAt, mods []*target.Module) *dwarfWalker {
	w := &dwarfWalker{abi: abi, order: binary.LittleEndian, mem: mem}
	if abi == emit.ABIS390XBigEndian || abi == emit.ABIAArch64BigEndian {
		w.order = binary.BigEndian
	}
	mods = slices.Clone(mods)
	slices.SortStableFunc(mods, func(a, b *target.Module) int { return cmpU64(a.Start, b.Start) })
	for _, m := range mods {
		if n := len(w.mods); m.End <= m.Start || n > 0 && m.Start < w.mods[n-1].end {
			continue
		}
		f, err := elf.Open(m.Path)
		if err != nil {
			tb.Fatal(err)
		}
		fr, err := cfi.Read(f, cfi.EHFrame)
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", m.Path, err)
		}
		fdes := slices.Clone(fr.FDEs)
		slices.SortFunc(fdes, func(a, b *cfi.FDE) int { return cmpU64(a.Start, b.Start) })
		dm := dwarfModule{start: m.Start, end: m.End, bias: m.Bias, frames: fr, fdes: fdes}
		if len(fdes) > 0 {
			dm.rows = fr.Rows(fdes[0])
		}
		w.mods = append(w.mods, dm)
	}
	return w
}

var errNoRow = errors.New("no CFI row")

// row returns the CFI row of pc in m.
func (m *dwarfModule) row(pc uint64) (*cfi.Row, *cfi.FDE, error) {
	i, _ := slices.BinarySearchFunc(m.fdes, pc+1, func(f *cfi.FDE, a uint64) int { return cmpU64(f.Start, a) })
	if i == 0 || pc >= m.fdes[i-1].End() {
		return nil, nil, errNoRow
	}
	fde := m.fdes[i-1]
	m.rows.Reset(m.frames, fde)
	for {
		r, err := m.rows.Next()
		if err != nil || r == nil {
			return nil, nil, errNoRow
		}
		if pc >= r.PC && pc < r.End {
			return r, fde, nil
		}
	}
}

// walk appends the PCs of the stack of regs to pcs.
func (w *dwarfWalker) walk(regs *unwind.Regs, pcs []uint64) []uint64 {
	cur := *regs
	exact := true
	w.spDifferAt = w.spDifferAt[:0]
	for frame := 0; len(pcs) < 4096; frame++ {
		pcs = append(pcs, cur.PC)
		look := cur.PC
		if !exact {
			look--
		}
		m := w.module(look)
		if m == nil {
			return pcs
		}
		r, fde, err := m.row(look - m.bias)
		if err != nil {
			return pcs
		}
		var cfa uint64
		if r.CFA.IsExpression() {
			v, ok := w.eval(&cur, r.CFA.Expr, 0, false)
			if !ok {
				return pcs
			}
			cfa = v
		} else {
			base, ok := cur.Get(uint32(r.CFA.Reg))
			if !ok {
				return pcs
			}
			cfa = uint64(int64(base) + r.CFA.Offset)
		}
		next := unwind.Regs{Known: cur.Known}
		next.R = cur.R
		raCol := fde.CIE.RAColumn
		ra, raOK := uint64(0), false
		if raCol < unwind.NumRegs && w.abi != emit.ABIAMD64LittleEndian {
			// No rule: the return address is still in its register
			// (AArch64's x30, s390x's r14), known in the innermost frame
			// and after a signal frame.
			ra, raOK = cur.Get(uint32(raCol))
		}
		for _, rr := range r.Regs {
			if rr.Rule.Kind == cfi.RuleSameValue || rr.Rule.Kind == cfi.RuleUnset {
				continue
			}
			v, known := w.apply(&cur, rr.Rule, cfa)
			if rr.Column == raCol {
				ra, raOK = v, known
				continue
			}
			if rr.Column < unwind.NumRegs {
				if known {
					next.Set(uint32(rr.Column), v)
				} else {
					next.Known &^= 1 << rr.Column
				}
			}
		}
		if !raOK || ra == 0 {
			return pcs
		}
		if raCol < unwind.NumRegs && w.abi != emit.ABIAMD64LittleEndian {
			// The caller's x30/r14 is not known from here: only the
			// innermost frame and a signal frame have it.
			next.Known &^= 1 << raCol
		}
		if w.callerSP(&cur, &next, r, cfa, fde.CIE.Signal) {
			w.spDifferAt = append(w.spDifferAt, frame)
		}
		next.PC = ra
		exact = fde.CIE.Signal
		cur = next
	}
	return pcs
}

// apply evaluates a register rule (no expressions) with CFA cfa.
func (w *dwarfWalker) apply(cur *unwind.Regs, r cfi.Rule, cfa uint64) (uint64, bool) {
	switch r.Kind {
	case cfi.RuleOffset:
		return w.word(uint64(int64(cfa) + r.Offset))
	case cfi.RuleValOffset:
		return uint64(int64(cfa) + r.Offset), true
	case cfi.RuleRegister:
		return cur.Get(uint32(r.Reg))
	case cfi.RuleExpression:
		addr, ok := w.eval(cur, r.Expr, cfa, true)
		if !ok {
			return 0, false
		}
		return w.word(addr)
	case cfi.RuleValExpression:
		return w.eval(cur, r.Expr, cfa, true)
	}
	return 0, false
}

// eval evaluates the DWARF expressions x86-64 CFI uses (glibc's signal
// trampoline, ld's PLT entries): literals, breg (16: the PC), deref and
// arithmetic; with push, the CFA is pushed first (register rules).
func (w *dwarfWalker) eval(cur *unwind.Regs, expr []byte, cfa uint64, push bool) (uint64, bool) {
	var st [16]uint64
	n := 0
	if push {
		st[0], n = cfa, 1
	}
	pop2 := func() (uint64, uint64, bool) {
		if n < 2 {
			return 0, 0, false
		}
		n -= 2
		return st[n], st[n+1], true
	}
	for i := 0; i < len(expr); {
		op := expr[i]
		i++
		if n >= len(st)-1 {
			return 0, false
		}
		switch {
		case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
			st[n] = uint64(op - 0x30)
			n++
		case op >= 0x70 && op <= 0x8f: // DW_OP_breg0..31
			off, k := sleb(expr[i:])
			i += k
			var v uint64
			if op-0x70 == 16 && w.abi == emit.ABIAMD64LittleEndian {
				v = cur.PC
			} else {
				var ok bool
				if v, ok = cur.Get(uint32(op - 0x70)); !ok {
					return 0, false
				}
			}
			st[n] = uint64(int64(v) + off)
			n++
		case op == 0x06: // DW_OP_deref
			if n < 1 {
				return 0, false
			}
			v, ok := w.word(st[n-1])
			if !ok {
				return 0, false
			}
			st[n-1] = v
		case op == 0x23: // DW_OP_plus_uconst
			v, k := uleb(expr[i:])
			i += k
			if n < 1 {
				return 0, false
			}
			st[n-1] += v
		case op == 0x1a, op == 0x22, op == 0x24, op == 0x2a, op == 0x1c: // and, plus, shl, ge, minus
			a, b, ok := pop2()
			if !ok {
				return 0, false
			}
			var v uint64
			switch op {
			case 0x1a:
				v = a & b
			case 0x22:
				v = a + b
			case 0x24:
				v = a << b
			case 0x2a:
				if int64(a) >= int64(b) {
					v = 1
				}
			case 0x1c:
				v = a - b
			}
			st[n] = v
			n++
		default:
			return 0, false
		}
	}
	if n < 1 {
		return 0, false
	}
	return st[n-1], true
}

func uleb(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, len(b)
}

func sleb(b []byte) (int64, int) {
	var v int64
	for i, c := range b {
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c&0x40 != 0 && 7*(i+1) < 64 {
				v |= -1 << (7 * (i + 1))
			}
			return v, i + 1
		}
	}
	return v, len(b)
}

func (w *dwarfWalker) word(addr uint64) (uint64, bool) {
	if _, err := w.mem.ReadAt(w.buf[:], int64(addr)); err != nil {
		return 0, false
	}
	return w.order.Uint64(w.buf[:]), true
}

// callerSP sets the caller's stack pointer in next: the CFA on x86-64 and
// AArch64; on s390x, where the CFA is the caller's %r15 + 160, %r15 by the
// CFI's rule, or CFA-160 where there is none or it names a register that
// is not known. A signal frame's %r15 is the CFI's (the interrupted
// frame's, from the signal frame). It reports whether the CFI's rule gave
// a %r15 that is not CFA-160 (signal frames aside).
func (w *dwarfWalker) callerSP(cur, next *unwind.Regs, r *cfi.Row, cfa uint64, signal bool) (differs bool) {
	switch w.abi {
	case emit.ABIAMD64LittleEndian:
		next.Set(7, cfa)
		return false
	case emit.ABIS390XBigEndian:
	default:
		next.Set(31, cfa)
		return false
	}
	for _, rr := range r.Regs {
		if rr.Column != 15 || rr.Rule.Kind == cfi.RuleSameValue || rr.Rule.Kind == cfi.RuleUnset {
			continue
		}
		if v, known := w.apply(cur, rr.Rule, cfa); known {
			if !signal { // a signal frame's %r15 is the interrupted one
				w.spChecked++
				if v != cfa-160 {
					w.spDiffer++
					differs = true
				}
			}
			next.Set(15, v)
			return differs
		}
		w.spFromCFA++
		next.Set(15, cfa-160)
		return false
	}
	// No rule: GCC writes none for a function that never restores %r15
	// (one that does not return); "same value" would be the callee's
	// %r15, below the CFA the caller's frame was entered with.
	w.spNoRule++
	next.Set(15, cfa-160)
	return false
}

func (w *dwarfWalker) module(pc uint64) *dwarfModule {
	i, _ := slices.BinarySearchFunc(w.mods, pc+1, func(m dwarfModule, a uint64) int { return cmpU64(m.start, a) })
	if i == 0 || pc >= w.mods[i-1].end {
		return nil
	}
	return &w.mods[i-1]
}
