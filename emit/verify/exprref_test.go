package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// A reference evaluator for the DWARF expressions FuzzExpr gives evalExpr.
// It is written from the DWARF 5 specification (section 2.5), not from
// evalExpr: it runs the expression on concrete values (every register, the
// CFA and every memory word have a value of their own) and says what
// evalExpr must do with it. evalExpr's symbolic result, made concrete with
// the same values, must equal the reference's.

// refMachine holds the concrete values an expression runs on.
type refMachine struct {
	order binary.ByteOrder
	pcReg int64 // DWARF register holding the PC, -1 if none
	pc    uint64
	hasPC bool
	cfa   uint64
}

// mix64 is splitmix64's finalizer: distinct inputs give unrelated outputs,
// so two registers (or two memory words) never share a value by accident.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// register returns the value of DWARF register r.
func (m *refMachine) register(r uint64) uint64 {
	if m.pcReg >= 0 && r == uint64(m.pcReg) {
		return m.pc
	}
	return mix64(r + 1)
}

// load returns the word in memory at addr.
func (m *refMachine) load(addr uint64) uint64 { return mix64(addr ^ 0x5555) }

// refKind says what an entry is in the symbolic form verify promises to
// follow: a constant, a register or the CFA plus a constant, or a word
// loaded from such an address. Anything else is opaque.
type refKind int

const (
	refConst refKind = iota
	refAddress
	refLoaded
	refOpaque
)

// refEntry is one stack entry: its concrete value and its kind.
type refEntry struct {
	v    uint64
	kind refKind
}

// refOutcome is what the reference says about one expression.
type refOutcome struct {
	// malformed: the expression is not valid DWARF (a truncated operand,
	// a stack underflow, an unknown operation, no result); evalExpr must
	// fail.
	malformed error
	// unknown: the expression uses an operation the reference does not
	// model (control flow, division, ...) or one whose result DWARF leaves
	// open (a shift by 64 or more): nothing is asserted.
	unknown bool
	// result is the top of the stack.
	result refEntry
	// inContract: every operation stayed within the symbolic form (no
	// opaque value was made, at most 16 entries, every LEB128 fits 64
	// bits, the PC read only when known): evalExpr must succeed.
	inContract bool
	// readsUnknownPC: the expression reads the PC register and no PC
	// was given; evalExpr must fail.
	readsUnknownPC bool
}

// refStackLimit is the depth evalExpr documents (its fixed stack).
const refStackLimit = 16

// refEval runs expr on m, with the CFA pushed first when pushCFA.
func refEval(expr []byte, m *refMachine, pushCFA bool) refOutcome {
	e := refEvaluator{expr: expr, m: m, out: refOutcome{inContract: true}}
	if pushCFA {
		e.push(refEntry{v: m.cfa, kind: refAddress})
	}
	for e.p < len(expr) && e.out.malformed == nil && !e.out.unknown {
		op := expr[e.p]
		e.p++
		e.step(op)
	}
	if e.out.malformed == nil && !e.out.unknown {
		if len(e.stack) == 0 {
			e.out.malformed = errors.New("empty result")
		} else {
			e.out.result = e.stack[len(e.stack)-1]
		}
	}
	return e.out
}

// refEvaluator is the state of one refEval.
type refEvaluator struct {
	expr  []byte
	p     int
	m     *refMachine
	stack []refEntry
	out   refOutcome
}

func (e *refEvaluator) push(x refEntry) {
	if x.kind == refOpaque {
		e.out.inContract = false
	}
	e.stack = append(e.stack, x)
	if len(e.stack) > refStackLimit {
		e.out.inContract = false
	}
}

func (e *refEvaluator) pop() (refEntry, bool) {
	if len(e.stack) == 0 {
		e.out.malformed = errors.New("stack underflow")
		return refEntry{}, false
	}
	x := e.stack[len(e.stack)-1]
	e.stack = e.stack[:len(e.stack)-1]
	return x, true
}

// uleb and sleb decode LEB128 (DWARF 5 section 7.6) into 64 bits; a value
// needing more takes the expression out of the contract.
func (e *refEvaluator) uleb() (uint64, bool) { return e.leb(false) }

func (e *refEvaluator) sleb() (int64, bool) {
	v, ok := e.leb(true)
	return int64(v), ok
}

func (e *refEvaluator) leb(signed bool) (uint64, bool) {
	var v uint64
	for i := 0; e.p < len(e.expr); i++ {
		b := e.expr[e.p]
		e.p++
		if i < 9 {
			v |= uint64(b&0x7f) << (7 * i)
		} else if i == 9 {
			v |= uint64(b&1) << 63
		}
		if i > 9 || i == 9 && !lastLEBByteFits(b, signed) {
			e.out.inContract = false
		}
		if b&0x80 != 0 {
			continue
		}
		if bits := 7 * (i + 1); signed && bits < 64 && b&0x40 != 0 {
			v |= ^uint64(0) << bits
		}
		return v, true
	}
	e.out.malformed = errors.New("truncated LEB128")
	return 0, false
}

// lastLEBByteFits reports whether b, the tenth byte of a LEB128, adds
// nothing past bit 63: bits 1-6 are zero, or for a signed number copies
// of bit 0 (the sign).
func lastLEBByteFits(b byte, signed bool) bool {
	if signed {
		return b&0x7f == 0 || b&0x7f == 0x7f
	}
	return b&0x7e == 0
}

// fixed reads an n-byte constant in the machine's byte order.
func (e *refEvaluator) fixed(n int, signed bool) (uint64, bool) {
	if len(e.expr)-e.p < n {
		e.out.malformed = fmt.Errorf("truncated %d-byte constant", n)
		return 0, false
	}
	b := make([]byte, 8)
	var v uint64
	if e.m.order == binary.BigEndian {
		copy(b[8-n:], e.expr[e.p:e.p+n])
		v = binary.BigEndian.Uint64(b)
	} else {
		copy(b, e.expr[e.p:e.p+n])
		v = binary.LittleEndian.Uint64(b)
	}
	e.p += n
	if signed && n < 8 && v&(1<<(8*n-1)) != 0 {
		v |= ^uint64(0) << (8 * n)
	}
	return v, true
}

// breg pushes register r plus a signed offset read from the expression.
func (e *refEvaluator) breg(r uint64) {
	off, ok := e.sleb()
	if !ok {
		return
	}
	if e.m.pcReg >= 0 && r == uint64(e.m.pcReg) {
		if !e.m.hasPC {
			e.out.readsUnknownPC = true
			e.out.inContract = false
		}
		e.push(refEntry{v: e.m.register(r) + uint64(off), kind: refConst})
		return
	}
	e.push(refEntry{v: e.m.register(r) + uint64(off), kind: refAddress})
}

// step runs one operation whose opcode has been read.
func (e *refEvaluator) step(op byte) {
	switch {
	case op >= 0x30 && op <= 0x4f: // DW_OP_lit<n>
		e.push(refEntry{v: uint64(op - 0x30)})
	case op >= 0x70 && op <= 0x8f: // DW_OP_breg<n>
		e.breg(uint64(op - 0x70))
	case op == 0x92: // DW_OP_bregx
		if r, ok := e.uleb(); ok {
			e.breg(r)
		}
	case op >= 0x08 && op <= 0x0f: // DW_OP_const1u, const1s ... const8s
		n := map[byte]int{0x08: 1, 0x09: 1, 0x0a: 2, 0x0b: 2, 0x0c: 4, 0x0d: 4, 0x0e: 8, 0x0f: 8}[op]
		if v, ok := e.fixed(n, op%2 == 1); ok {
			e.push(refEntry{v: v})
		}
	case op == 0x10: // DW_OP_constu
		if v, ok := e.uleb(); ok {
			e.push(refEntry{v: v})
		}
	case op == 0x11: // DW_OP_consts
		if v, ok := e.sleb(); ok {
			e.push(refEntry{v: uint64(v)})
		}
	case op == 0x96: // DW_OP_nop
	default:
		e.stackOp(op)
	}
}

// stackOp runs the operations that work on the stack alone.
func (e *refEvaluator) stackOp(op byte) {
	switch op {
	case 0x12: // DW_OP_dup
		if x, ok := e.pop(); ok {
			e.push(x)
			e.push(x)
		}
	case 0x13: // DW_OP_drop
		e.pop()
	case 0x14: // DW_OP_over
		if len(e.stack) < 2 {
			e.out.malformed = errors.New("DW_OP_over: stack underflow")
			return
		}
		e.push(e.stack[len(e.stack)-2])
	case 0x16: // DW_OP_swap
		if len(e.stack) < 2 {
			e.out.malformed = errors.New("DW_OP_swap: stack underflow")
			return
		}
		n := len(e.stack)
		e.stack[n-1], e.stack[n-2] = e.stack[n-2], e.stack[n-1]
	case 0x06: // DW_OP_deref
		if x, ok := e.pop(); ok {
			kind := refOpaque
			if x.kind == refAddress {
				kind = refLoaded
			}
			e.push(refEntry{v: e.m.load(x.v), kind: kind})
		}
	case 0x23: // DW_OP_plus_uconst
		if n, ok := e.uleb(); ok {
			if x, ok := e.pop(); ok {
				e.push(refEntry{v: x.v + n, kind: sumKind(x.kind, refConst)})
			}
		}
	case 0x1a, 0x1c, 0x1e, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e:
		e.binary(op)
	default:
		if refUnmodelled(op) {
			e.out.unknown = true
			return
		}
		e.out.malformed = fmt.Errorf("operation %#x is not one of DWARF's or not meant for CFI", op)
	}
}

// refUnmodelled reports whether op is a DWARF operation the reference
// does not evaluate: evalExpr may support it or not.
func refUnmodelled(op byte) bool {
	switch {
	case op == 0x03: // DW_OP_addr
	case op >= 0x15 && op <= 0x20 && op != 0x16 && op != 0x1a && op != 0x1c && op != 0x1e:
		// pick, rot, xderef, abs, div, mod, neg, not
	case op == 0x28 || op == 0x2f: // bra, skip
	case op >= 0x50 && op <= 0x6f: // reg<n>: locations, not values
	case op >= 0x90 && op <= 0x9f: // regx, fbreg, piece, deref_size, call, ...
	case op >= 0xa0: // DWARF 5 typed operations and vendor extensions
	default:
		return false
	}
	return true
}

// sumKind is the kind of a+b: a constant offset added to a constant or
// an address keeps it so; anything else leaves the symbolic form.
func sumKind(a, b refKind) refKind {
	switch {
	case a == refConst && b == refConst:
		return refConst
	case a == refAddress && b == refConst, a == refConst && b == refAddress:
		return refAddress
	}
	return refOpaque
}

// binary runs a two-operand operation: a is the second entry, b the top.
func (e *refEvaluator) binary(op byte) {
	b, ok := e.pop()
	if !ok {
		return
	}
	a, ok := e.pop()
	if !ok {
		return
	}
	kind := refOpaque
	if a.kind == refConst && b.kind == refConst {
		kind = refConst
	}
	x, y := a.v, b.v
	var r uint64
	switch op {
	case 0x22: // plus
		r, kind = x+y, sumKind(a.kind, b.kind)
	case 0x1c: // minus
		r = x - y
		if a.kind == refAddress && b.kind == refConst {
			kind = refAddress
		}
	case 0x1a:
		r = x & y
	case 0x1e:
		r = x * y
	case 0x21:
		r = x | y
	case 0x27:
		r = x ^ y
	case 0x24, 0x25, 0x26: // shl, shr, shra: DWARF leaves counts of 64 or more open
		if y >= 64 {
			e.out.unknown = true
			return
		}
		r = map[byte]uint64{0x24: x << y, 0x25: x >> y, 0x26: uint64(int64(x) >> y)}[op]
	default: // eq, ge, gt, le, lt, ne: signed (DWARF 5 section 2.5.1.4)
		sx, sy := int64(x), int64(y)
		t := map[byte]bool{0x29: sx == sy, 0x2a: sx >= sy, 0x2b: sx > sy, 0x2c: sx <= sy, 0x2d: sx < sy, 0x2e: sx != sy}[op]
		if t {
			r = 1
		}
	}
	e.push(refEntry{v: r, kind: kind})
}

// concreteValue is evalExpr's symbolic result v on m's concrete values,
// and the kind it claims.
func concreteValue(v value, m *refMachine) (uint64, refKind) {
	if !v.sym {
		return uint64(v.off), refConst
	}
	base := m.register(v.reg)
	if v.cfa {
		base = m.cfa
	}
	addr := base + uint64(v.off)
	if v.deref {
		return m.load(addr), refLoaded
	}
	return addr, refAddress
}

// checkAgainstReference returns what is wrong with evalExpr's answer (v,
// err) for expr on m, per the reference; "" if nothing.
func checkAgainstReference(expr []byte, m *refMachine, pushCFA bool, v value, err error) string {
	ref := refEval(expr, m, pushCFA)
	switch {
	case ref.unknown:
		return ""
	case ref.malformed != nil:
		if err == nil {
			return fmt.Sprintf("result %+v for a malformed expression (%v)", v, ref.malformed)
		}
		return ""
	case ref.readsUnknownPC:
		if err == nil {
			return fmt.Sprintf("result %+v for an expression reading the PC with no PC given", v)
		}
		return ""
	case err != nil:
		if ref.inContract {
			return fmt.Sprintf("error %q for an expression within the symbolic form (reference: %#x)", err, ref.result.v)
		}
		return ""
	}
	got, kind := concreteValue(v, m)
	if got != ref.result.v || kind != ref.result.kind {
		return fmt.Sprintf("result %+v is %#x (kind %d), reference %#x (kind %d)", v, got, kind, ref.result.v, ref.result.kind)
	}
	return ""
}

// TestExprReference checks the reference evaluator on expressions worked
// out by hand, so that FuzzExpr compares evalExpr with something right.
func TestExprReference(t *testing.T) {
	m := &refMachine{order: binary.LittleEndian, pcReg: 16, pc: 0x103b, hasPC: true, cfa: 0x7000}
	rsp := m.register(7)
	tests := []struct {
		name    string
		expr    []byte
		pushCFA bool
		want    refEntry
		in      bool // within the symbolic form
		bad     bool // malformed
	}{
		{"PLT", []byte{0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}, false, refEntry{rsp + 16, refAddress}, true, false},
		{"deref", []byte{0x76, 0x78, 0x06}, false, refEntry{m.load(m.register(6) - 8), refLoaded}, true, false},
		{"CFA minus", []byte{0x10, 16, 0x1c}, true, refEntry{0x7000 - 16, refAddress}, true, false},
		{"const2s", []byte{0x0b, 0xf0, 0xff}, false, refEntry{v: ^uint64(15)}, true, false},
		{"shra", []byte{0x0f, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x34, 0x26}, false, refEntry{v: 0xf800000000000000}, true, false},
		{"stack ops", []byte{0x31, 0x32, 0x33, 0x14, 0x16, 0x13, 0x1c, 0x22}, false, refEntry{v: 1}, true, false},
		{"consts INT64_MIN", []byte{0x11, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, false, refEntry{v: 1 << 63}, true, false},
		{"register product", []byte{0x76, 0, 0x77, 0, 0x1e}, false, refEntry{m.register(6) * rsp, refOpaque}, false, false},
		{"truncated", []byte{0x76}, false, refEntry{}, false, true},
		{"underflow", []byte{0x31, 0x22}, false, refEntry{}, false, true},
		{"empty", nil, false, refEntry{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := refEval(tt.expr, m, tt.pushCFA)
			if (got.malformed != nil) != tt.bad || got.unknown {
				t.Fatalf("malformed %v, unknown %v; want malformed %v", got.malformed, got.unknown, tt.bad)
			}
			if tt.bad {
				return
			}
			if got.result != tt.want || got.inContract != tt.in {
				t.Errorf("%+v (in the symbolic form %v), want %+v (%v)", got.result, got.inContract, tt.want, tt.in)
			}
		})
	}
}
