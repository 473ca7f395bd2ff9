package lower

import (
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// Skip is a function that has no SFrame FDE, or (Emitted) a signal frame
// whose CFI could not be translated and that gas emits anyway with no FREs.
type Skip struct {
	FDE *cfi.FDE
	// Reason is gas's warning after "no SFrame FDE emitted; ", e.g.
	// "non-SP/FP register 10 in .cfi_def_cfa", or a reason of ours
	// (listed in docs/lower.md): for input gas never produces, and in the
	// default mode for CFI whose meaning SFrame cannot express.
	Reason string
	// Emitted is true when the function still got an FDE: a signal frame
	// (CIE augmentation S) is kept with zero FREs, as gas keeps it.
	Emitted bool
}

// Error returns "function at 0x...: reason".
func (s *Skip) Error() string {
	if s.FDE == nil {
		return s.Reason
	}
	return fmt.Sprintf("function at %#x: %s", s.FDE.Start, s.Reason)
}

// Lowerer translates the functions of one CFI section for one target. It
// keeps scratch state between calls, so it is not safe for concurrent use.
type Lowerer struct {
	target Target
	regs   regs
	frames *cfi.Frames
	opt    Options
	x      translator

	// ciesDone caches the translator's state after the initial
	// instructions of the CIEs used last (most files have a few CIEs,
	// shared by thousands of FDEs).
	ciesDone [cieCacheSize]cieState
	cieNext  int // the entry replaced next

	// Chunks the FREs and data words of results are cut from, so that a
	// section costs a few allocations instead of two per function.
	freArena  []emit.FRE
	wordArena []int32

	// The fast path (fast.go): its start states per CIE, its state.
	fastCIEs [cieCacheSize]fastCIE
	fastNext int
	fastLast *fastCIE // the entry of fastCIEs used last
	fastRun  fastRun
}

const arenaChunk = 4096

// nextChunk is the capacity of an arena's next chunk after one of
// capacity last: 64 first, doubling up to limit, so that a small file's
// few functions do not each cost a zeroed chunk of limit entries (a
// 4096-FRE chunk and its words: 192 KiB per file).
func nextChunk(last, limit int) int { return min(max(2*last, 64), limit) }

func (l *Lowerer) allocFREs(n int) []emit.FRE {
	if n > cap(l.freArena)-len(l.freArena) {
		l.freArena = make([]emit.FRE, 0, max(n, nextChunk(cap(l.freArena), arenaChunk)))
	}
	s := l.freArena[len(l.freArena) : len(l.freArena)+n : len(l.freArena)+n]
	l.freArena = l.freArena[:len(l.freArena)+n]
	return s
}

// recycle lets the next functions reuse the FRE and word arenas: the
// FREs of the functions lowered so far must no longer be used (packed).
// The FREs are zeroed: encode leaves an RA-undefined FRE as allocFREs
// gives it.
func (l *Lowerer) recycle() {
	clear(l.freArena)
	l.freArena = l.freArena[:0]
	l.wordArena = l.wordArena[:0]
}

// wordsFor returns the word arena with room for n more data words; the
// caller appends to it and stores it back.
func (l *Lowerer) wordsFor(n int) []int32 {
	if n > cap(l.wordArena)-len(l.wordArena) {
		l.wordArena = make([]int32, 0, max(n, nextChunk(cap(l.wordArena), 4*arenaChunk)))
	}
	return l.wordArena
}

// NewLowerer returns a Lowerer for the FDEs of frames with the given
// options (the zero Options: the default, correct mode).
func NewLowerer(frames *cfi.Frames, t Target, opt Options) (*Lowerer, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	return &Lowerer{target: t, regs: t.regs(), frames: frames, opt: opt}, nil
}

// Function translates one FDE. With skip == nil, or skip.Emitted, fde is
// the SFrame FDE (StartOffset 0, FREOffset 0: the caller places it).
// Otherwise the function has no SFrame FDE and skip says why.
func (l *Lowerer) Function(f *cfi.FDE) (fde emit.FDE, skip *Skip) {
	signal := f.CIE != nil && f.CIE.Signal
	pauthB := l.regs.aarch64 && f.CIE != nil && f.CIE.BKey
	fde, skip = l.lower(f.Size, signal, pauthB, func() error { return l.translate(f) })
	if skip != nil {
		skip.FDE = f
	}
	return fde, skip
}

// lower translates one function of the given size with run, which feeds
// its instructions to l.x, then encodes it (gas's sframe_do_fde and the
// signal-frame fallback of create_sframe_all).
func (l *Lowerer) lower(size uint64, signal, pauthB bool, run func() error) (fde emit.FDE, skip *Skip) {
	if size > 0xffffffff {
		return fde, &Skip{Reason: fmt.Sprintf("function size %#x does not fit in 32 bits", size)}
	}
	ft := emit.FRETypeFor(uint32(size))
	fde.Size = uint32(size)
	err := run()
	if err == nil {
		err = l.encode(&fde)
		if err == nil {
			fde.Info = emit.FuncInfo(emit.PCInc, ft, pauthB, signal)
			return fde, nil
		}
	}
	var why *refusal
	if !errors.As(err, &why) {
		return emit.FDE{}, &Skip{Reason: "malformed CFI: " + err.Error()}
	}
	skip = &Skip{Reason: why.reason}
	if signal && !why.late {
		// gas emits a signal frame it could not translate with no FREs,
		// info bit 7 set and the default FDE type.
		fde.FREs = nil
		fde.Info = emit.FuncInfo(emit.PCInc, ft, pauthB, true)
		fde.Info2 = 0
		skip.Emitted = true
	}
	return fde, skip
}

// translate runs the CIE's initial instructions then the FDE's through the
// translator (gas's sframe_do_fde).
func (l *Lowerer) translate(f *cfi.FDE) error {
	x := &l.x
	x.reset(l.regs, f.Size)
	x.gas = l.opt.GasCompat
	if f.CIE == nil {
		return errors.New("FDE has no CIE")
	}
	if l.frames == nil {
		return errors.New("the Lowerer has no CFI section")
	}
	if f.CIE.RAColumn != l.regs.ra {
		return refuse("non-default RA register %d", uint32(f.CIE.RAColumn))
	}
	if !l.restoreCIE(f.CIE) {
		if err := l.run(l.frames.CIEInstructions(f.CIE), f, f.CIE.Initial, f.CIE.InitialOffset); err != nil {
			return err
		}
		x.endCIE()
		l.saveCIE(f.CIE)
	}
	if err := l.run(l.frames.FDEInstructions(f), f, f.Instructions, f.InstructionsOffset); err != nil {
		return err
	}
	return x.finish()
}

// cieCacheSize is how many CIEs a Lowerer keeps the translated initial
// instructions of.
const cieCacheSize = 8

// cieState is the translator's state after a CIE's initial instructions.
type cieState struct {
	cie    *cfi.CIE
	cur    row
	hasCur bool
	flex   bool
}

// saveCIE caches the translator's state after cie's initial instructions
// when it depends on nothing but the CIE: no FRE, no advance (whose limit
// is the FDE's size), no remembered state, no reason to refuse.
func (l *Lowerer) saveCIE(cie *cfi.CIE) {
	x := &l.x
	if len(x.fres) != 0 || x.dropped != 0 || x.advanced || x.hasRemember || len(x.stack) != 0 ||
		x.noCFA || x.unrepresentable != "" || len(x.reasons) > 1 {
		return
	}
	l.ciesDone[l.cieNext] = cieState{cie: cie, cur: x.cur, hasCur: x.hasCur, flex: x.flex}
	l.cieNext = (l.cieNext + 1) % cieCacheSize
}

// restoreCIE puts the translator, just reset for a function, in the state
// saveCIE cached for cie, if any.
func (l *Lowerer) restoreCIE(cie *cfi.CIE) bool {
	for i := range l.ciesDone {
		c := &l.ciesDone[i]
		if c.cie != cie {
			continue
		}
		x := &l.x
		x.cur, x.hasCur, x.flex = c.cur, c.hasCur, c.flex
		x.endCIE()
		return true
	}
	return false
}

// run translates the instructions of r, which reads data (at section
// offset base).
func (l *Lowerer) run(r *cfi.InstructionReader, f *cfi.FDE, data []byte, base uint64) error {
	var ins cfi.Instruction
	for {
		at := r.Offset()
		err := r.NextInto(&ins)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			// An opcode gas has no directive for can only come from
			// .cfi_escape, whose bytes need not form a valid instruction
			// (e.g. a lone 0x2f); gas refuses it by its first byte.
			if p := at - base; at >= base && p < uint64(len(data)) && escapeOnly(data[p], &l.regs) {
				return refuse(".cfi_escape with op (%#x)", data[p])
			}
			return err
		}
		if err := l.x.step(&ins, f.Start); err != nil {
			return err
		}
	}
}

// encode writes the committed FREs into fde (gas's output_sframe_row_entry).
func (l *Lowerer) encode(fde *emit.FDE) error {
	x := &l.x
	r := &l.regs
	fde.FREs = l.allocFREs(len(x.fres))
	// At most 6 words per FRE (flex: CFA, RA and FP pairs).
	words := l.wordsFor(emit.MaxDataWords * len(x.fres))
	for i := range x.fres {
		f := &x.fres[i]
		e := &fde.FREs[i]
		e.StartAddr = uint32(f.pc)
		if f.raUndefined {
			continue // info 0, no data words: "RA undefined"
		}
		size, ok := r.wordSize(f, x.flex, x.gas)
		if !ok {
			return &refusal{reason: "SFrame unsupported FRE data word size", late: true}
		}
		n := len(words)
		words = r.appendWords(words, f, x.flex, size)
		e.Words = words[n:len(words):len(words)]
		l.wordArena = words
		baseSP := f.cfaReg != r.fp
		if x.flex {
			baseSP = false
		}
		e.Info = emit.FREInfo(baseSP, len(e.Words), size, f.mangledRA)
	}
	if x.flex {
		fde.Info2 = uint8(emit.FDEFlex)
	}
	return nil
}

// escapeOnly reports whether gas can only have emitted an instruction with
// this first byte from .cfi_escape data: it has no directive for it.
func escapeOnly(b byte, r *regs) bool {
	switch cfi.Op(b & 0xc0) {
	case cfi.OpAdvanceLoc, cfi.OpOffset, cfi.OpRestore:
		return false
	}
	switch cfi.Op(b) {
	case cfi.OpSetLoc, cfi.OpAdvanceLoc1, cfi.OpAdvanceLoc2, cfi.OpAdvanceLoc4,
		cfi.OpOffsetExtended, cfi.OpRestoreExtended, cfi.OpUndefined, cfi.OpSameValue,
		cfi.OpRegister, cfi.OpRememberState, cfi.OpRestoreState, cfi.OpDefCFA,
		cfi.OpDefCFARegister, cfi.OpDefCFAOffset, cfi.OpOffsetExtendedSF, cfi.OpDefCFASF,
		cfi.OpDefCFAOffsetSF, cfi.OpValOffset, cfi.OpValOffsetSF, cfi.OpGNUWindowSave:
		return false
	case cfi.OpAArch64NegateRAStateWithPC:
		return !r.aarch64
	}
	return true
}
