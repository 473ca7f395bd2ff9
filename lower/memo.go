package lower

import (
	"bytes"
	"hash/maphash"
	"math"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// memo remembers the functions a lowering has translated, so that a
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
	data    []byte   // the CFI section (cfi.Frames.Data)
	slots   []uint64 // hash>>32<<32 | entry index+1; 0 is empty
	entries []memoEntry
}

// memoEntry is a function lowered earlier: its key (where its instruction
// bytes are in the CFI section, its CIE's offset, its FRE type), its SFrame
// FDE, and how far its CFI advances. A lookup reads the entry and the
// bytes, not the function's cfi.FDE (one cache miss less: lookups are most
// of what the memo costs).
type memoEntry struct {
	insOff, insLen uint32
	cie            uint32 // the CIE's section offset
	fde            uint32 // its FDE in the section
	reach          uint32 // the last advance's offset in it
	ft             emit.FREType
}

// matches reports whether f has e's key.
func (m *memo) matches(e *memoEntry, f *cfi.FDE) bool {
	return uint64(e.cie) == f.CIE.Offset && e.ft == emit.FRETypeFor(uint32(f.Size)) &&
		int(e.insLen) == len(f.Instructions) &&
		bytes.Equal(m.data[e.insOff:e.insOff+e.insLen], f.Instructions)
}

// newMemo returns a memo for about n functions of frames, or nil if its
// section is too big for the entries' 32-bit offsets.
func newMemo(frames *cfi.Frames, n int) *memo {
	if uint64(len(frames.Data)) > math.MaxUint32 {
		return nil
	}
	size := 64 // 1.3 KiB with its entries for a small library, not 20
	for size < n {
		size *= 2
	}
	return &memo{seed: maphash.MakeSeed(), data: frames.Data, slots: make([]uint64, size), entries: make([]memoEntry, 0, size/2)}
}

// memoable reports whether f may be looked up and added: it has a CIE and
// a size that fits SFrame's 32 bits (a bigger one is refused, not
// translated).
func memoable(f *cfi.FDE) bool {
	return f.CIE != nil && f.Size <= math.MaxUint32
}

// hash returns the hash of f's memo key: instruction bytes, CIE, FRE type.
func (m *memo) hash(f *cfi.FDE) uint64 {
	return m.keyHash(f.Instructions, f.CIE.Offset, emit.FRETypeFor(uint32(f.Size)))
}

func (m *memo) keyHash(ins []byte, cieOff uint64, ft emit.FREType) uint64 {
	h := maphash.Bytes(m.seed, ins)
	h ^= (cieOff + 1) * 0x9e3779b97f4a7c15
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
		if m.matches(e, f) {
			if f.Size <= uint64(e.reach) {
				return 0, false
			}
			return int(e.fde), true
		}
	}
}

// add records that FDE i of the section was lowered from f (key hash h),
// the translator having reached offset reach, unless f's key is there
// already, f's instructions are not in the section where it says, or f
// ends where its CFI reaches (its last state then covered no address, so
// was not checked).
func (m *memo) add(h uint64, f *cfi.FDE, i int, reach uint64) {
	if reach >= f.Size || uint64(i) >= math.MaxUint32 || f.CIE.Offset > math.MaxUint32 {
		return
	}
	off, n := f.InstructionsOffset, uint64(len(f.Instructions))
	if off > uint64(len(m.data)) || n > uint64(len(m.data))-off || n > 0 && &m.data[off] != &f.Instructions[0] {
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
				insOff: uint32(off), insLen: uint32(n), cie: uint32(f.CIE.Offset),
				fde: uint32(i), reach: uint32(reach), ft: emit.FRETypeFor(uint32(f.Size)),
			})
			m.slots[j] = h>>32<<32 | uint64(len(m.entries))
			return
		}
		if s>>32 == h>>32 && m.matches(&m.entries[uint32(s)-1], f) {
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
		h := m.keyHash(m.data[e.insOff:e.insOff+e.insLen], uint64(e.cie), e.ft)
		j := h & mask
		for m.slots[j] != 0 {
			j = (j + 1) & mask
		}
		m.slots[j] = h>>32<<32 | uint64(k+1)
	}
}
