package lower

// regInvalid is SFRAME_FRE_REG_INVALID: no register.
const regInvalid = 0xffffffff

// loc is where a tracked register (FP or RA) of the caller can be found
// (SFRAME_FRE_ELEM_LOC_*).
type loc uint8

const (
	locNone  loc = iota // not saved: the register still holds its value
	locReg              // in another register (flex FDEs)
	locStack            // at CFA + offset (or, flex, at reg + offset)
)

// row is gas's struct sframe_row_entry without the end label: the state
// of one FRE while it is being built or once committed.
type row struct {
	// The fields are ordered by size so that a row takes 88 bytes, not
	// 112: the translator copies one per FRE.
	pc uint64 // pc_begin, as an offset from the function start

	cfaReg    uint64 // DWARF register, regInvalid if unset
	cfaOffset int64  // s390x: already encoded as (off-160)/8
	// cfaExprOff is, while the CFA is an expression (cfaDeref), the
	// offset DWARF keeps for a later def_cfa_register (correct mode).
	cfaExprOff int64

	fpReg    uint64
	fpOffset int64
	raReg    uint64
	raOffset int64

	// Correct mode: why SFrame cannot say what the CFI says of the CFA,
	// FP or RA in this state (noReason when it can). gas's translation
	// goes on (so a later refusal of gas's still decides the reason, and a
	// later op at the same address may replace the rule); the function is
	// refused if such a state covers any address (translator.covers).
	// The reasons are kept by the translator (translator.reasons), so
	// that a row holds no pointers and copies cheaply.
	cfaBad, fpBad, raBad reason

	mergeCandidate bool
	mangledRA      bool // AArch64 RA signed (sticky)
	raUndefined    bool // outermost frame (sticky)
	cfaDeref       bool
	fpLoc          loc
	fpDeref        bool
	raLoc          loc
	raDeref        bool
}

// reason is a reason of the correct mode, an index in translator.reasons;
// noReason when the rule can be represented.
type reason uint32

const noReason reason = 0

// newRow is sframe_row_entry_new: nothing known, a merge candidate.
func newRow(pc uint64) row {
	return row{pc: pc, mergeCandidate: true, cfaReg: regInvalid}
}

// inherit is sframe_row_entry_initialize: copy every tracked field of src,
// but neither the PC nor merge_candidate.
func (r *row) inherit(src *row) {
	pc, mc := r.pc, r.mergeCandidate
	*r = *src
	r.pc, r.mergeCandidate = pc, mc
}
