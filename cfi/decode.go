package cfi

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Next decodes the next instruction. It returns io.EOF after the last one;
// any other error names the instruction's offset.
func (r *InstructionReader) Next() (Instruction, error) {
	var in Instruction
	err := r.next(&in)
	return in, err
}

// NextInto is Next decoding into *in, which the caller may reuse (an
// Instruction is 88 bytes: a hot loop saves the copies).
func (r *InstructionReader) NextInto(in *Instruction) error { return r.next(in) }

// DecodeAt decodes the instruction at offset pos of the reader's
// instructions into *in, as Next decodes the one at its position, and
// returns the offset after it (io.EOF at the end); the reader does not
// move. It is for a caller that walks the bytes itself and takes the most
// common instructions in place, with ULEB128 (lower's fast path): the
// others it decodes here, so that there is one decoder of their operands.
func (r *InstructionReader) DecodeAt(pos int, in *Instruction) (int, error) {
	if pos < 0 || pos > len(r.data) {
		return pos, fmt.Errorf("instruction offset %d outside the %d bytes of instructions", pos, len(r.data))
	}
	at := r.pos
	r.pos = pos
	err := r.next(in)
	next := r.pos
	r.pos = at
	return next, err
}

// next decodes the instruction at r.pos into in, which the caller may
// reuse, and moves past it.
func (r *InstructionReader) next(in *Instruction) error {
	data := r.data
	start := r.pos
	if start >= len(data) {
		return io.EOF
	}
	b := data[start]
	pos := start + 1
	var err error
	*in = Instruction{}
	switch b >> 6 {
	case 1:
		in.Op = OpAdvanceLoc
		in.Delta, err = r.advance(uint64(b & 0x3f))
	case 2:
		in.Op = OpOffset
		in.Reg = uint64(b & 0x3f)
		in.Offset, pos, err = r.offset(pos, unsignedFactored)
	case 3:
		in.Op = OpRestore
		in.Reg = uint64(b & 0x3f)
	default:
		in.Op = Op(b)
		pos, err = r.operands(in, pos)
	}
	if err != nil {
		return r.errorf(start, in.Op, err)
	}
	in.Raw = data[start:pos]
	r.pos = pos
	return nil
}

// operands decodes the operands of the primary opcodes (high 2 bits zero).
func (r *InstructionReader) operands(in *Instruction, pos int) (int, error) {
	data := r.data
	var err error
	switch in.Op {
	case OpNop, OpRememberState, OpRestoreState, OpAArch64NegateRAStateWithPC, OpGNUWindowSave:
	case OpSetLoc:
		in.Delta, pos, err = r.setLoc(pos)
	case OpAdvanceLoc1:
		if pos >= len(data) {
			return pos, errTruncated
		}
		in.Delta, err = r.advance(uint64(data[pos]))
		pos++
	case OpAdvanceLoc2:
		if 2 > len(data)-pos {
			return pos, errTruncated
		}
		in.Delta, err = r.advance(uint64(r.order.Uint16(data[pos:])))
		pos += 2
	case OpAdvanceLoc4:
		if 4 > len(data)-pos {
			return pos, errTruncated
		}
		in.Delta, err = r.advance(uint64(r.order.Uint32(data[pos:])))
		pos += 4
	case OpOffsetExtended, OpValOffset:
		pos, err = r.regOffset(in, pos, unsignedFactored)
	case OpOffsetExtendedSF, OpValOffsetSF, OpDefCFASF:
		pos, err = r.regOffset(in, pos, signedFactored)
	case OpGNUNegativeOffsetExtended:
		pos, err = r.regOffset(in, pos, unsignedFactored)
		in.Offset = -in.Offset
	case OpRestoreExtended, OpUndefined, OpSameValue, OpDefCFARegister:
		in.Reg, pos, err = ULEB128(data, pos)
	case OpRegister:
		if in.Reg, pos, err = ULEB128(data, pos); err == nil {
			in.Reg2, pos, err = ULEB128(data, pos)
		}
	case OpDefCFA:
		pos, err = r.regOffset(in, pos, unsignedBytes)
	case OpDefCFAOffset, OpGNUArgsSize:
		in.Offset, pos, err = r.offset(pos, unsignedBytes)
	case OpDefCFAOffsetSF:
		in.Offset, pos, err = r.offset(pos, signedFactored)
	case OpDefCFAExpression:
		in.Expr, pos, err = block(data, pos)
	case OpExpression, OpValExpression:
		if in.Reg, pos, err = ULEB128(data, pos); err == nil {
			in.Expr, pos, err = block(data, pos)
		}
	default:
		return pos, errUnknownOp
	}
	return pos, err
}

var errUnknownOp = fmt.Errorf("unknown opcode")

// offsetForm is how an offset operand is encoded.
type offsetForm uint8

const (
	unsignedFactored offsetForm = iota // ULEB128 times the data alignment factor
	signedFactored                     // SLEB128 times the data alignment factor (the _sf forms)
	unsignedBytes                      // ULEB128 in bytes (def_cfa, def_cfa_offset, GNU_args_size)
)

// regOffset decodes a register operand into in.Reg and an offset operand
// of form into in.Offset, at data[pos:].
func (r *InstructionReader) regOffset(in *Instruction, pos int, form offsetForm) (int, error) {
	var err error
	if in.Reg, pos, err = ULEB128(r.data, pos); err != nil {
		return pos, err
	}
	in.Offset, pos, err = r.offset(pos, form)
	return pos, err
}

// offset decodes an offset operand of form at data[pos:].
func (r *InstructionReader) offset(pos int, form offsetForm) (int64, int, error) {
	if form == signedFactored {
		s, pos, err := SLEB128(r.data, pos)
		if err != nil {
			return 0, pos, err
		}
		off, err := r.factorS(s)
		return off, pos, err
	}
	u, pos, err := ULEB128(r.data, pos)
	if err != nil {
		return 0, pos, err
	}
	if form == unsignedBytes {
		off, err := unsignedOffset(u)
		return off, pos, err
	}
	off, err := r.factorU(u)
	return off, pos, err
}

// block reads a ULEB128 length and that many bytes.
func block(data []byte, pos int) ([]byte, int, error) {
	n, pos, err := ULEB128(data, pos)
	if err != nil {
		return nil, pos, err
	}
	if n > uint64(len(data)-pos) {
		return nil, pos, fmt.Errorf("expression of %d bytes runs past the end (%d left)", n, len(data)-pos)
	}
	end := pos + int(n)
	return data[pos:end:end], end, nil
}

func (r *InstructionReader) advance(delta uint64) (uint64, error) {
	hi, lo := bits.Mul64(delta, r.codeAlign)
	if hi != 0 {
		return 0, fmt.Errorf("advance %d * code alignment factor %d overflows", delta, r.codeAlign)
	}
	return lo, nil
}

func unsignedOffset(u uint64) (int64, error) {
	if u > math.MaxInt64 {
		return 0, fmt.Errorf("offset %#x too large", u)
	}
	return int64(u), nil
}

func (r *InstructionReader) factorU(u uint64) (int64, error) {
	if u > math.MaxInt64 {
		return 0, fmt.Errorf("offset %#x too large", u)
	}
	return r.factorS(int64(u))
}

func (r *InstructionReader) factorS(s int64) (int64, error) {
	f := r.dataAlign
	if s == int64(int32(s)) && f == int64(int32(f)) {
		return s * f, nil
	}
	p := s * f
	if s != 0 && (p/s != f || (s == -1 && f == math.MinInt64) || (f == -1 && s == math.MinInt64)) {
		return 0, fmt.Errorf("offset %d * data alignment factor %d overflows", s, f)
	}
	return p, nil
}

// errorf reports a problem with the instruction at data[start].
func (r *InstructionReader) errorf(start int, op Op, err error) error {
	if errors.Is(err, errUnknownOp) {
		return fmt.Errorf("instruction at offset %#x: unknown opcode %#02x", r.base+uint64(start), r.data[start])
	}
	return fmt.Errorf("instruction at offset %#x: %v: %w", r.base+uint64(start), op, err)
}
