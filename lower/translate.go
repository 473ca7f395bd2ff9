package lower

import (
	"fmt"
	"math"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// maxFREs is the most FREs one SFrame FDE can hold (sfda_func_num_fres is a u16).
const maxFREs = math.MaxUint16

// refusal is a reason the function has no SFrame FDE: the text gas prints
// after "no SFrame FDE emitted; ", or one of ours for input gas can never
// produce (documented in docs/lower.md).
type refusal struct {
	reason string
	late   bool // found while encoding, after translation: no signal-frame fallback
}

func (r *refusal) Error() string { return r.reason }

func refuse(format string, args ...any) error {
	return &refusal{reason: fmt.Sprintf(format, args...)}
}

// translator is gas's sframe_xlate_ctx: it turns one function's CFI op
// list into FREs. One translator is reused across functions.
type translator struct {
	r    regs
	size uint64 // function size: FRE start addresses may not exceed it

	fres        []row // committed FREs (first_fre .. last_fre)
	dropped     int   // FREs committed beyond maxFREs+1 (not kept)
	cur         row   // the scratch FRE
	hasCur      bool
	remember    row
	hasRemember bool
	flex        bool
	pc          uint64 // location reached by the advances so far
	advanced    bool   // an advance op was translated
	setLoc      bool   // a DW_CFA_set_loc was translated

	// gas selects gas's translation (Options.GasCompat). Otherwise the
	// translation means what the CFI means: DW_CFA_restore goes back to
	// the state after the CIE's initial instructions (cie, once cieDone),
	// and remembered states form a stack.
	gas     bool
	cie     row
	cieDone bool
	stack   []row
	// unrepresentable is the first reason (correct mode) why a state
	// that covers some address cannot be said in SFrame (row.cfaBad,
	// fpBad, raBad).
	unrepresentable string
	// reasons holds the texts of the row reasons of this function
	// (reasons[0] is unused: noReason).
	reasons []string
	// noCFA: some address (the first one noCFAAt) has no CFA rule.
	noCFA   bool
	noCFAAt uint64
}

func (x *translator) reset(r regs, size uint64) {
	x.r = r
	x.size = size
	x.fres = x.fres[:0]
	x.dropped = 0
	x.hasCur = false
	x.hasRemember = false
	x.flex = false
	x.pc = 0
	x.advanced = false
	x.setLoc = false
	x.cieDone = false
	x.stack = x.stack[:0]
	x.unrepresentable = ""
	x.reasons = append(x.reasons[:0], "")
	x.noCFA = false
}

// bad is, in correct mode, the reason a rule cannot be represented (kept
// in row.cfaBad, fpBad, raBad); noReason in GasCompat mode.
func (x *translator) bad(format string, args ...any) reason {
	if x.gas {
		return noReason
	}
	x.reasons = append(x.reasons, fmt.Sprintf(format, args...))
	return reason(len(x.reasons) - 1)
}

// text returns the text of a row reason ("" for noReason).
func (x *translator) text(r reason) string {
	if int(r) >= len(x.reasons) {
		return ""
	}
	return x.reasons[r]
}

// endCIE marks the end of the CIE's initial instructions: their state is
// what DW_CFA_restore returns to (correct mode).
func (x *translator) endCIE() {
	x.cie = newRow(0)
	if x.hasCur {
		x.cie.inherit(&x.cur)
	}
	x.cieDone = true
}

// last returns the last committed FRE, or nil.
func (x *translator) last() *row {
	if len(x.fres) == 0 {
		return nil
	}
	return &x.fres[len(x.fres)-1]
}

// needCur reports an op that gas handles by dereferencing the scratch FRE
// (assertion or crash in gas when there is none: possible only for a CIE
// that does not define the CFA).
func (x *translator) needCur(op cfi.Op) error {
	if !x.hasCur {
		return refuse("%v before any CFA rule", op)
	}
	return nil
}

// commit is sframe_xlate_ctx_add_fre for the scratch FRE.
func (x *translator) commit() {
	if len(x.fres) > maxFREs {
		// The function will be refused at the end (gas counts on and
		// checks after the last op, so a later unsupported op still
		// decides the warning). Only the last FRE is ever looked at
		// again, so overwrite it instead of growing without bound.
		x.fres[len(x.fres)-1] = x.cur
		x.dropped++
		return
	}
	if !x.gas && len(x.fres) > 0 && x.fres[len(x.fres)-1].pc == x.cur.pc {
		// A zero advance: the previous FRE covers no address, and two
		// FREs at one address make the Linux kernel refuse the section
		// (starts must increase strictly). gas keeps both.
		x.fres[len(x.fres)-1] = x.cur
		return
	}
	x.fres = append(x.fres, x.cur)
}

// numFREs is num_xlate_fres.
func (x *translator) numFREs() int { return len(x.fres) + x.dropped }

// advance is sframe_xlate_do_advance_loc with the new location pc.
func (x *translator) advance(pc uint64) error {
	x.advanced = true
	if pc > x.size {
		return refuse("CFI advances to %#x, past the function end %#x", pc, x.size)
	}
	x.covers(pc)
	x.pc = pc
	switch {
	case !x.hasCur:
		// Only after a CIE without def_cfa (.cfi_startproc simple).
		x.cur = newRow(pc)
		x.hasCur = true
		return nil
	case !x.cur.mergeCandidate:
		// Commit the scratch FRE and start a new one that inherits
		// everything from it (sframe_row_entry_initialize): the scratch
		// FRE itself, at the new PC, a merge candidate again.
		x.commit()
		x.cur.pc = pc
		x.cur.mergeCandidate = true
	default:
		// Nothing relevant changed since the last advance: the last
		// committed FRE silently grows; only the scratch FRE moves.
		x.cur.pc = pc
	}
	return nil
}

// finish commits the scratch FRE, even when it is still a merge candidate
// (which gives the trailing duplicate FRE), then makes gas's function-level
// checks.
func (x *translator) finish() error {
	x.covers(x.size)
	if x.hasCur {
		x.commit()
		x.hasCur = false
	}
	if x.numFREs() > maxFREs {
		return refuse("Number of FREs exceeds UINT16_MAX")
	}
	if x.r.raTracking && !x.r.s390x {
		for i := range x.fres {
			if x.fres[i].fpLoc == locStack && x.fres[i].raLoc != locStack {
				return refuse("FP without RA on stack")
			}
		}
	}
	if x.unrepresentable != "" {
		return refuse("%s", x.unrepresentable)
	}
	if x.noCFA && len(x.fres) > 0 {
		return refuse("no CFA rule at offset %#x (.cfi_startproc simple without .cfi_def_cfa)", x.noCFAAt)
	}
	return nil
}

// covers notes, in correct mode, that the current state applies to the
// addresses from x.pc up to end: if SFrame cannot express it, the function
// is refused (at the end, so that gas's own refusals keep precedence). An
// outermost frame (RA undefined) needs no CFA, FP or RA.
func (x *translator) covers(end uint64) {
	if x.gas || end <= x.pc || x.unrepresentable != "" {
		return
	}
	if !x.hasCur || x.cur.cfaReg == regInvalid {
		// .cfi_startproc simple without .cfi_def_cfa: gas starts the
		// first FRE late (consumers want one at offset 0) or writes
		// sp+0. Only an error if the function gets FREs (finish).
		if !x.noCFA {
			x.noCFA, x.noCFAAt = true, x.pc
		}
		return
	}
	if x.cur.raUndefined {
		return
	}
	for _, why := range [...]reason{x.cur.cfaBad, x.cur.fpBad, x.cur.raBad} {
		if why != noReason {
			x.unrepresentable = x.text(why)
			return
		}
	}
}
