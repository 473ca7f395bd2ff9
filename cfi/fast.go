package cfi

// fastOperandLimit bounds the LEB128 operands the fast path takes: with
// alignment factors within ±fastFactorLimit, no product overflows.
const (
	fastOperandLimit = 1 << 24
	fastFactorLimit  = 1 << 24
)

// fast executes the most common instructions in place, without building
// an Instruction: DW_CFA_advance_loc(1,2), offset, restore, nop,
// def_cfa_offset, def_cfa_register, def_cfa, remember_state and
// restore_state, their operands below fastOperandLimit. It decodes them
// with the general decoder's ULEB128 (inlined here) and returns a row when
// an advance ends one; it leaves anything else (and every error) to the
// general path, Next's. BenchmarkRowsOnly measures what it is worth
// (docs/performance.md); TestFastPathAgrees and FuzzRows check that it
// gives the general path's rows.
func (it *RowIterator) fast() (*Row, bool) {
	r := &it.r
	data := r.data
	pos := r.pos
	ca, da := r.codeAlign, r.dataAlign
	if ca > fastFactorLimit || da > fastFactorLimit || da < -fastFactorLimit {
		return nil, false
	}
	for pos < len(data) {
		b := data[pos]
		switch b >> 6 {
		case 1: // advance_loc
			if row, done := it.fastAdvance(uint64(b&0x3f)*ca, pos, pos+1); done {
				return row, row != nil
			}
			pos++
			continue
		case 2: // offset
			u, next, err := ULEB128(data, pos+1)
			if err != nil || u >= fastOperandLimit {
				r.pos = pos
				return nil, false
			}
			it.setOffset(uint64(b&0x3f), int64(u)*da)
			pos = next
			continue
		case 3: // restore
			it.restore(uint64(b & 0x3f))
			pos++
			continue
		}
		switch Op(b) {
		case OpNop:
			pos++
			continue
		case OpDefCFAOffset:
			if u, next, err := ULEB128(data, pos+1); err == nil && u < fastOperandLimit {
				it.row.CFA.Offset = int64(u)
				pos = next
				continue
			}
		case OpAdvanceLoc1, OpAdvanceLoc2:
			n := 1 + int(b) - int(OpAdvanceLoc1) // operand size
			if len(data)-pos <= n {
				break
			}
			d := uint64(data[pos+1])
			if n == 2 {
				if r.big {
					d = d<<8 | uint64(data[pos+2])
				} else {
					d |= uint64(data[pos+2]) << 8
				}
			}
			if row, done := it.fastAdvance(d*ca, pos, pos+1+n); done {
				return row, row != nil
			}
			pos += 1 + n
			continue
		case OpDefCFARegister:
			if reg, next, err := ULEB128(data, pos+1); err == nil {
				it.row.CFA.Reg, it.row.CFA.Expr = reg, nil
				pos = next
				continue
			}
		case OpDefCFA:
			reg, next, err := ULEB128(data, pos+1)
			if err != nil {
				break
			}
			if u, next, err := ULEB128(data, next); err == nil && u < fastOperandLimit {
				it.row.CFA = CFARule{Reg: reg, Offset: int64(u)}
				pos = next
				continue
			}
		case OpRememberState:
			it.remember()
			pos++
			continue
		case OpRestoreState:
			if len(it.stack) > 0 {
				it.restoreState()
				pos++
				continue
			}
		}
		break
	}
	r.pos = pos
	return nil, false
}

// fastAdvance applies an advance of d bytes by the instruction at
// data[pos:next]. done is false for a zero advance, which ends no row;
// else row is the row it ends, or nil when the location would wrap around
// (the general path reports it, the reader left at pos).
func (it *RowIterator) fastAdvance(d uint64, pos, next int) (row *Row, done bool) {
	if d == 0 {
		return nil, false
	}
	end := it.pc + d
	if end < it.pc {
		it.r.pos = pos
		return nil, true
	}
	it.r.pos = next
	return it.emit(end), true
}
