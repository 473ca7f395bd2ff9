package main

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/unwind"
)

// recordedStack is one thread of a core, its memory copied into the
// process: what both unwinders of BenchmarkStackWalk walk.
type recordedStack struct {
	mem  *memSnapshot
	mods []*stackModule
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
		return 0, errUnmapped
	}
	d := m.data[i-1]
	off := a - m.starts[i-1]
	if off+uint64(len(p)) > uint64(len(d)) {
		return 0, errUnmapped
	}
	return copy(p, d[off:]), nil
}

// snapshot copies the memory of core p.
func snapshot(tb testing.TB, cm *coreMem) *memSnapshot {
	m := &memSnapshot{}
	for _, s := range cm.segs {
		b := make([]byte, s.Filesz)
		if _, err := cm.r.ReadAt(b, int64(s.Off)); err != nil {
			tb.Fatal(err)
		}
		m.starts, m.data = append(m.starts, s.Vaddr), append(m.data, b)
	}
	return m
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
			p, closer, err := openCore(c)
			if err != nil {
				tb.Fatal(err)
			}
			mem := snapshot(tb, p.Mem.(*coreMem))
			closer.Close()
			mods := modulesFromMappings(p.Mappings, "")
			for _, t := range p.Threads {
				stacks = append(stacks, recordedStack{mem: mem, mods: mods, regs: t.Regs})
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
		umods, kept := unwindModules(slices.Clone(s.mods))
		w, err := unwind.New(emit.ABIAMD64LittleEndian, s.mem, umods)
		if err != nil {
			b.Fatal(err)
		}
		ws[i] = walkers{w, newDwarfWalker(b, s.mem, kept)}
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

// dwarfWalker is the DWARF CFI baseline of BenchmarkStackWalk: an x86-64
// unwinder that, at each frame, finds the PC's FDE and executes its CIE's
// and its own instructions up to the PC (cfi.RowIterator), then applies
// the row's CFA and register rules, as libgcc's and libunwind's DWARF
// unwinders do (without their caches).
type dwarfWalker struct {
	mem  *memSnapshot
	mods []dwarfModule
	buf  [8]byte
}

// dwarfModule is one module's CFI, its FDEs in address order.
type dwarfModule struct {
	start, end, bias uint64
	frames           *cfi.Frames
	fdes             []*cfi.FDE
	rows             *cfi.RowIterator
}

func newDwarfWalker(tb testing.TB, mem *memSnapshot, mods []*stackModule) *dwarfWalker {
	w := &dwarfWalker{mem: mem}
	for _, m := range mods {
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
	for len(pcs) < 4096 {
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
		next.Set(7, cfa) // the caller's %rsp is the CFA
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
			if op-0x70 == 16 {
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
	return binary.LittleEndian.Uint64(w.buf[:]), true
}

func (w *dwarfWalker) module(pc uint64) *dwarfModule {
	i, _ := slices.BinarySearchFunc(w.mods, pc+1, func(m dwarfModule, a uint64) int { return cmpU64(m.start, a) })
	if i == 0 || pc >= w.mods[i-1].end {
		return nil
	}
	return &w.mods[i-1]
}
