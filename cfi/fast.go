package cfi

// fast executes the most common instructions in place, without building
// an Instruction: DW_CFA_advance_loc, offset, restore, nop,
// def_cfa_offset, def_cfa_register, def_cfa, remember_state and
// restore_state with one-byte operands. It returns a row when an advance
// ends one; it leaves anything else (and every error) to the general path.
func (it *RowIterator) fast() (*Row, bool) {
	r := &it.r
	data := r.data
	pos := r.pos
	ca, da := r.codeAlign, r.dataAlign
	if ca > 1<<24 || da > 1<<24 || da < -(1<<24) {
		return nil, false
	}
	for pos < len(data) {
		b := data[pos]
		switch b >> 6 {
		case 1: // advance_loc
			pos++
			d := uint64(b&0x3f) * ca
			if d == 0 {
				continue
			}
			next := it.pc + d
			if next < it.pc {
				r.pos = pos - 1
				return nil, false
			}
			r.pos = pos
			return it.emit(next), true
		case 2: // offset
			if pos+1 >= len(data) || data[pos+1] >= 0x80 {
				r.pos = pos
				return nil, false
			}
			it.setOffset(uint64(b&0x3f), int64(data[pos+1])*da)
			pos += 2
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
			if pos+1 < len(data) && data[pos+1] < 0x80 {
				it.row.CFA.Offset = int64(data[pos+1])
				pos += 2
				continue
			}
			if pos+2 < len(data) && data[pos+2] < 0x80 {
				it.row.CFA.Offset = int64(data[pos+1]&0x7f) | int64(data[pos+2])<<7
				pos += 3
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
			d *= ca
			pos += 1 + n
			if d == 0 {
				continue
			}
			next := it.pc + d
			if next < it.pc {
				r.pos = pos - 1 - n
				return nil, false
			}
			r.pos = pos
			return it.emit(next), true
		case OpDefCFARegister:
			if pos+1 < len(data) && data[pos+1] < 0x80 {
				it.row.CFA.Reg, it.row.CFA.Expr = uint64(data[pos+1]), nil
				pos += 2
				continue
			}
		case OpDefCFA:
			if pos+2 < len(data) && data[pos+1] < 0x80 && data[pos+2] < 0x80 {
				it.row.CFA = CFARule{Reg: uint64(data[pos+1]), Offset: int64(data[pos+2])}
				pos += 3
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
