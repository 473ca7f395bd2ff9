package verify

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// A DWARF expression is evaluated symbolically: registers other than the
// program counter stay symbolic (base register + constant), so the result
// can be compared with an SFrame rule. Only the operations GNU tools and
// compilers write into CFA and register rules are supported.

// value is one stack entry: a constant, or [*](base + off).
type value struct {
	sym   bool // symbolic: base + off; else the constant off
	cfa   bool // symbolic base is the CFA (pushed for register rules)
	reg   uint64
	off   int64
	deref bool
}

// errPC is returned when the expression reads the PC and no PC was given.
var errPC = errors.New("expression reads the program counter")

// evalExpr evaluates expr, whose multi-byte constants are in order. pushCFA starts the stack with the CFA (register
// rules); pcReg is the DWARF register holding the PC (-1 if none), pc its
// value when hasPC.
func evalExpr(expr []byte, order binary.ByteOrder, pushCFA bool, pcReg int64, pc uint64, hasPC bool) (value, error) {
	var stack [16]value
	sp := 0
	push := func(v value) error {
		if sp == len(stack) {
			return errors.New("expression stack overflow")
		}
		stack[sp] = v
		sp++
		return nil
	}
	pop := func() (value, error) {
		if sp == 0 {
			return value{}, errors.New("expression stack underflow")
		}
		sp--
		return stack[sp], nil
	}
	if pushCFA {
		_ = push(value{sym: true, cfa: true})
	}
	p := 0
	uleb := func() (uint64, error) { return lebOperand(cfi.ULEB128, expr, &p) }
	sleb := func() (int64, error) { return lebOperand(cfi.SLEB128, expr, &p) }
	fixed := func(n int, signed bool) (int64, error) {
		if len(expr)-p < n {
			return 0, errors.New("truncated constant in expression")
		}
		var v uint64
		b := expr[p : p+n]
		switch n {
		case 1:
			v = uint64(b[0])
		case 2:
			v = uint64(order.Uint16(b))
		case 4:
			v = uint64(order.Uint32(b))
		default:
			v = order.Uint64(b)
		}
		p += n
		if signed {
			shift := 64 - 8*uint(n)
			return int64(v<<shift) >> shift, nil
		}
		return int64(v), nil
	}
	breg := func(r uint64) error {
		off, err := sleb()
		if err != nil {
			return err
		}
		if pcReg >= 0 && r == uint64(pcReg) {
			if !hasPC {
				return errPC
			}
			return push(value{off: int64(pc) + off})
		}
		return push(value{sym: true, reg: r, off: off})
	}
	for p < len(expr) {
		op := expr[p]
		p++
		var err error
		switch {
		case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
			err = push(value{off: int64(op - 0x30)})
		case op >= 0x70 && op <= 0x8f: // DW_OP_breg0..31
			err = breg(uint64(op - 0x70))
		case op == 0x92: // DW_OP_bregx
			var r uint64
			if r, err = uleb(); err == nil {
				err = breg(r)
			}
		case op >= 0x08 && op <= 0x0f: // DW_OP_const1u .. const8s
			n := 1 << ((op - 0x08) / 2)
			var v int64
			if v, err = fixed(n, op&1 == 1); err == nil {
				err = push(value{off: v})
			}
		case op == 0x10: // DW_OP_constu
			var v uint64
			if v, err = uleb(); err == nil {
				err = push(value{off: int64(v)})
			}
		case op == 0x11: // DW_OP_consts
			var v int64
			if v, err = sleb(); err == nil {
				err = push(value{off: v})
			}
		case op == 0x96: // DW_OP_nop
		case op == 0x12: // DW_OP_dup
			var a value
			if a, err = pop(); err == nil {
				_ = push(a)
				err = push(a)
			}
		case op == 0x13: // DW_OP_drop
			_, err = pop()
		case op == 0x16: // DW_OP_swap
			if sp < 2 {
				return value{}, errors.New("expression stack underflow")
			}
			stack[sp-1], stack[sp-2] = stack[sp-2], stack[sp-1]
		case op == 0x14: // DW_OP_over
			if sp < 2 {
				return value{}, errors.New("expression stack underflow")
			}
			err = push(stack[sp-2])
		case op == 0x06: // DW_OP_deref
			var a value
			if a, err = pop(); err == nil {
				if !a.sym || a.deref {
					return value{}, errors.New("DW_OP_deref of a value that is not a register or CFA plus offset")
				}
				a.deref = true
				err = push(a)
			}
		case op == 0x23: // DW_OP_plus_uconst
			var v uint64
			var a value
			if v, err = uleb(); err == nil {
				if a, err = pop(); err == nil {
					if a.deref {
						return value{}, errors.New("arithmetic on a dereferenced value")
					}
					a.off += int64(v)
					err = push(a)
				}
			}
		case op == 0x1a || op == 0x1c || op == 0x1e || op == 0x21 || op == 0x22 || op == 0x24 ||
			op == 0x25 || op == 0x26 || op == 0x27 || op >= 0x29 && op <= 0x2e:
			var a, b value
			if b, err = pop(); err != nil {
				return value{}, err
			}
			if a, err = pop(); err != nil {
				return value{}, err
			}
			var r value
			if r, err = binop(op, a, b); err == nil {
				err = push(r)
			}
		default:
			return value{}, fmt.Errorf("unsupported DWARF operation %#x", op)
		}
		if err != nil {
			return value{}, err
		}
	}
	if sp == 0 {
		return value{}, errors.New("empty expression")
	}
	return stack[sp-1], nil
}

// lebOperand decodes the LEB128 operand at expr[*p:] with decode (cfi's
// ULEB128 or SLEB128) and moves *p past it.
func lebOperand[T uint64 | int64](decode func([]byte, int) (T, int, error), expr []byte, p *int) (T, error) {
	start := *p
	v, next, err := decode(expr, start)
	*p = next
	if err != nil {
		return 0, fmt.Errorf("LEB128 operand at offset %d of the expression: %w", start, err)
	}
	return v, nil
}

func binop(op byte, a, b value) (value, error) {
	if a.deref || b.deref {
		return value{}, errors.New("arithmetic on a dereferenced value")
	}
	switch op {
	case 0x22: // plus
		if a.sym && b.sym {
			return value{}, errors.New("sum of two registers")
		}
		if b.sym {
			a, b = b, a
		}
		a.off += b.off
		return a, nil
	case 0x1c: // minus
		if b.sym {
			return value{}, errors.New("subtraction of a register")
		}
		a.off -= b.off
		return a, nil
	}
	if a.sym || b.sym {
		return value{}, fmt.Errorf("DWARF operation %#x on a register value", op)
	}
	x, y := a.off, b.off
	var r int64
	switch op {
	case 0x1a:
		r = x & y
	case 0x1e:
		r = x * y
	case 0x21:
		r = x | y
	case 0x24:
		r = int64(uint64(x) << (uint64(y) & 63))
	case 0x25:
		r = int64(uint64(x) >> (uint64(y) & 63))
	case 0x26:
		r = x >> (uint64(y) & 63)
	case 0x27:
		r = x ^ y
	default: // comparisons, signed
		var t bool
		switch op {
		case 0x29:
			t = x == y
		case 0x2a:
			t = x >= y
		case 0x2b:
			t = x > y
		case 0x2c:
			t = x <= y
		case 0x2d:
			t = x < y
		case 0x2e:
			t = x != y
		}
		if t {
			r = 1
		}
	}
	return value{off: r}, nil
}
