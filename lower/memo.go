package lower

import (
	"bytes"
	"hash/maphash"
	"math"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// memo remembers the functions a packed lowering has translated, so that a
// function with the same CIE, FRE type and instruction bytes as an earlier
// one gets a copy of that one's SFrame FDE instead of a second translation.
// On big C++ libraries two functions in three repeat an earlier one's CFI
// (libLLVM.so: 56,066 distinct of 160,805).
//
// The translation of such a function depends on nothing else, with three
// exceptions that memo leaves out: DW_CFA_set_loc (its operand is an
// address), a function refused or emitted without FREs (the reasons name
// addresses and sizes), and the function's size, which limits the
// advances and decides whether the last state covers any address: an entry
// is used only for a function longer than the last advance of the one it
// was made from, which is then translated exactly alike.
//
// It is a hash table with open addressing: a slot holds 32 bits of the
// hash and the index of an entry (the table stays small enough for the
// processor's caches, which a Go map of the same entries did not: its
// lookups cost more than the translations they saved).
type memo struct {
	seed    maphash.Seed
	slots   []uint64 // hash>>32<<32 | entry index+1; 0 is empty
	entries []memoEntry
}

// memoEntry is a function lowered earlier: its key (copied from its
// cfi.FDE, so that a lookup need not read that), its SFrame FDE, and how
// far its CFI advances.
type memoEntry struct {
	ins   []byte // instruction bytes (aliasing the CFI section)
	cie   *cfi.CIE
	ft    emit.FREType
	fde   uint32 // its FDE in the section
	reach uint32 // the last advance's offset in it
}

// matches reports whether f has e's key.
func (e *memoEntry) matches(f *cfi.FDE) bool {
	return e.cie == f.CIE && e.ft == emit.FRETypeFor(uint32(f.Size)) && bytes.Equal(e.ins, f.Instructions)
}

// newMemo returns a memo for about n functions.
func newMemo(n int) *memo {
	size := 1024
	for size < n {
		size *= 2
	}
	return &memo{seed: maphash.MakeSeed(), slots: make([]uint64, size)}
}

// memoable reports whether f may be looked up and added: it has a CIE and
// a size that fits SFrame's 32 bits (a bigger one is refused, not
// translated).
func memoable(f *cfi.FDE) bool {
	return f.CIE != nil && f.Size <= math.MaxUint32
}

// hash returns the hash of f's memo key: instruction bytes, CIE, FRE type.
func (m *memo) hash(f *cfi.FDE) uint64 {
	return m.keyHash(f.Instructions, f.CIE, emit.FRETypeFor(uint32(f.Size)))
}

func (m *memo) keyHash(ins []byte, cie *cfi.CIE, ft emit.FREType) uint64 {
	h := maphash.Bytes(m.seed, ins)
	h ^= (cie.Offset + 1) * 0x9e3779b97f4a7c15
	return h ^ uint64(ft)<<59
}

// lookup returns the FDE lowered from the same CFI as f (whose key hashes
// to h), if f may share its translation.
func (m *memo) lookup(h uint64, f *cfi.FDE) (int, bool) {
	mask := uint64(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := m.slots[i]
		if s == 0 {
			return 0, false
		}
		if s>>32 != h>>32 {
			continue
		}
		e := &m.entries[uint32(s)-1]
		if e.matches(f) {
			if f.Size <= uint64(e.reach) {
				return 0, false
			}
			return int(e.fde), true
		}
	}
}

// add records that FDE i of the section was lowered from f (key hash h),
// the translator having reached offset reach, unless f's key is there
// already or f ends where its CFI reaches (its last state then covered no
// address, so was not checked).
func (m *memo) add(h uint64, f *cfi.FDE, i int, reach uint64) {
	if reach >= f.Size || i >= 1<<32-1 {
		return
	}
	if 2*(len(m.entries)+1) > len(m.slots) {
		m.grow()
	}
	mask := uint64(len(m.slots) - 1)
	for j := h & mask; ; j = (j + 1) & mask {
		s := m.slots[j]
		if s == 0 {
			m.entries = append(m.entries, memoEntry{
				ins: f.Instructions, cie: f.CIE, ft: emit.FRETypeFor(uint32(f.Size)),
				fde: uint32(i), reach: uint32(reach),
			})
			m.slots[j] = h>>32<<32 | uint64(len(m.entries))
			return
		}
		if s>>32 == h>>32 && m.entries[uint32(s)-1].matches(f) {
			return
		}
	}
}

// grow doubles the table.
func (m *memo) grow() {
	m.slots = make([]uint64, 2*len(m.slots))
	mask := uint64(len(m.slots) - 1)
	for k := range m.entries {
		e := &m.entries[k]
		h := m.keyHash(e.ins, e.cie, e.ft)
		j := h & mask
		for m.slots[j] != 0 {
			j = (j + 1) & mask
		}
		m.slots[j] = h>>32<<32 | uint64(k+1)
	}
}
