package cfi

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// rowString formats a row compactly for the tables below:
// "0x0-0x4 r7+8 r16=c-8".
func rowString(r *Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%#x-%#x ", r.PC, r.End)
	if r.CFA.IsExpression() {
		fmt.Fprintf(&b, "exp:%x", r.CFA.Expr)
	} else {
		fmt.Fprintf(&b, "r%d%+d", r.CFA.Reg, r.CFA.Offset)
	}
	for _, rr := range r.Regs {
		fmt.Fprintf(&b, " r%d=", rr.Column)
		switch rr.Rule.Kind {
		case RuleUndefined:
			b.WriteString("u")
		case RuleSameValue:
			b.WriteString("s")
		case RuleOffset:
			fmt.Fprintf(&b, "c%+d", rr.Rule.Offset)
		case RuleValOffset:
			fmt.Fprintf(&b, "v%+d", rr.Rule.Offset)
		case RuleRegister:
			fmt.Fprintf(&b, "r%d", rr.Rule.Reg)
		case RuleExpression:
			fmt.Fprintf(&b, "exp:%x", rr.Rule.Expr)
		case RuleValExpression:
			fmt.Fprintf(&b, "vexp:%x", rr.Rule.Expr)
		default:
			fmt.Fprintf(&b, "?%d", rr.Rule.Kind)
		}
	}
	if r.RAMangled {
		b.WriteString(" ra-mangled")
	}
	if r.ArgsSize != 0 {
		fmt.Fprintf(&b, " args=%d", r.ArgsSize)
	}
	return b.String()
}

// allRows reads the section and returns the rows of its FDEs, one string
// per row, and the first error.
func allRows(t *testing.T, data []byte, src Source, order binary.ByteOrder) ([]string, error) {
	t.Helper()
	fr, err := ReadSection(data, src, PointerContext{Order: order, AddrSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Errors) > 0 {
		return nil, fr.Errors[0]
	}
	var rows []string
	var it RowIterator
	for _, fde := range fr.FDEs {
		it.Reset(fr, fde)
		for {
			r, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return rows, err
			}
			rows = append(rows, rowString(r))
		}
	}
	return rows, nil
}

// x86CIE is the CIE initial program of x86-64: CFA rsp+8, RA at CFA-8.
var x86CIE = []byte{0x0c, 7, 8, 0x80 | 16, 1}

func TestRowOps(t *testing.T) {
	tests := []struct {
		name   string
		ca     uint64
		da     int64
		cie    []byte
		instrs []byte
		want   []string
		err    string
	}{
		{name: "empty", instrs: nil, want: []string{"0x1000-0x1010 r7+8 r16=c-8"}},
		{name: "advance_loc", instrs: []byte{0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0e, 8},
			want: []string{"0x1000-0x1001 r7+8 r16=c-8", "0x1001-0x1004 r7+16 r6=c-16 r16=c-8", "0x1004-0x1010 r7+8 r6=c-16 r16=c-8"}},
		{name: "advance_loc code align 4", ca: 4, instrs: []byte{0x41, 0x0e, 16},
			want: []string{"0x1000-0x1004 r7+8 r16=c-8", "0x1004-0x1010 r7+16 r16=c-8"}},
		{name: "advance_loc1", instrs: []byte{0x02, 5, 0x0e, 16},
			want: []string{"0x1000-0x1005 r7+8 r16=c-8", "0x1005-0x1010 r7+16 r16=c-8"}},
		{name: "advance_loc2", instrs: []byte{0x03, 2, 0, 0x0e, 16},
			want: []string{"0x1000-0x1002 r7+8 r16=c-8", "0x1002-0x1010 r7+16 r16=c-8"}},
		{name: "advance_loc4", instrs: []byte{0x04, 3, 0, 0, 0, 0x0e, 16},
			want: []string{"0x1000-0x1003 r7+8 r16=c-8", "0x1003-0x1010 r7+16 r16=c-8"}},
		{name: "zero advances merge", instrs: []byte{0x40, 0x0e, 16, 0x02, 0, 0x41},
			want: []string{"0x1000-0x1001 r7+16 r16=c-8", "0x1001-0x1010 r7+16 r16=c-8"}},
		{name: "advance to the end", instrs: []byte{0x41, 0x0e, 16, 0x02, 15, 0x0e, 8},
			want: []string{"0x1000-0x1001 r7+8 r16=c-8", "0x1001-0x1010 r7+16 r16=c-8"}},
		{name: "set_loc", instrs: []byte{0x01, 0x08, 0x10, 0, 0, 0, 0, 0, 0, 0x0e, 16},
			want: []string{"0x1000-0x1008 r7+8 r16=c-8", "0x1008-0x1010 r7+16 r16=c-8"}},
		{name: "set_loc backwards", instrs: []byte{0x01, 0x08, 0x0f, 0, 0, 0, 0, 0, 0},
			err: "before the current location"},
		{name: "offset_extended", instrs: []byte{0x05, 3, 2},
			want: []string{"0x1000-0x1010 r7+8 r3=c-16 r16=c-8"}},
		{name: "offset_extended big register", instrs: []byte{0x05, 0x80, 0x01, 2},
			want: []string{"0x1000-0x1010 r7+8 r16=c-8 r128=c-16"}},
		{name: "offset_extended_sf", instrs: []byte{0x11, 3, 0x7e},
			want: []string{"0x1000-0x1010 r7+8 r3=c+16 r16=c-8"}},
		{name: "GNU_negative_offset_extended", instrs: []byte{0x2f, 3, 2},
			want: []string{"0x1000-0x1010 r7+8 r3=c+16 r16=c-8"}},
		{name: "restore to CIE rule", instrs: []byte{0x90, 3, 0x41, 0xd0},
			want: []string{"0x1000-0x1001 r7+8 r16=c-24", "0x1001-0x1010 r7+8 r16=c-8"}},
		{name: "restore without CIE rule", instrs: []byte{0x86, 2, 0x41, 0xc6},
			want: []string{"0x1000-0x1001 r7+8 r6=c-16 r16=c-8", "0x1001-0x1010 r7+8 r16=c-8"}},
		{name: "restore_extended", instrs: []byte{0x86, 2, 0x41, 0x06, 6},
			want: []string{"0x1000-0x1001 r7+8 r6=c-16 r16=c-8", "0x1001-0x1010 r7+8 r16=c-8"}},
		{name: "undefined same_value register", instrs: []byte{0x07, 16, 0x08, 3, 0x09, 6, 12},
			want: []string{"0x1000-0x1010 r7+8 r3=s r6=r12 r16=u"}},
		{name: "remember restore_state", instrs: []byte{0x0a, 0x0e, 16, 0x86, 2, 0x41, 0x0b, 0x41},
			want: []string{"0x1000-0x1001 r7+16 r6=c-16 r16=c-8", "0x1001-0x1002 r7+8 r16=c-8", "0x1002-0x1010 r7+8 r16=c-8"}},
		{name: "nested remember_state", instrs: []byte{0x0a, 0x0e, 16, 0x0a, 0x0e, 24, 0x41, 0x0b, 0x41, 0x0b},
			want: []string{"0x1000-0x1001 r7+24 r16=c-8", "0x1001-0x1002 r7+16 r16=c-8", "0x1002-0x1010 r7+8 r16=c-8"}},
		{name: "restore_state empty", instrs: []byte{0x41, 0x0b}, err: "DW_CFA_restore_state with no remembered state"},
		{name: "def_cfa", instrs: []byte{0x0c, 6, 16},
			want: []string{"0x1000-0x1010 r6+16 r16=c-8"}},
		{name: "def_cfa_sf", instrs: []byte{0x12, 6, 0x7e},
			want: []string{"0x1000-0x1010 r6+16 r16=c-8"}},
		{name: "def_cfa_register", instrs: []byte{0x0d, 6},
			want: []string{"0x1000-0x1010 r6+8 r16=c-8"}},
		{name: "def_cfa_offset 2-byte", instrs: []byte{0x0e, 0x80, 0x02},
			want: []string{"0x1000-0x1010 r7+256 r16=c-8"}},
		{name: "def_cfa_offset_sf", instrs: []byte{0x13, 0x7c},
			want: []string{"0x1000-0x1010 r7+32 r16=c-8"}},
		{name: "def_cfa_expression", instrs: []byte{0x0f, 2, 0x77, 0x08},
			want: []string{"0x1000-0x1010 exp:7708 r16=c-8"}},
		{name: "def_cfa_register after expression", instrs: []byte{0x0f, 2, 0x77, 0x08, 0x0d, 6},
			want: []string{"0x1000-0x1010 r6+0 r16=c-8"}},
		{name: "expression", instrs: []byte{0x10, 6, 2, 0x76, 0x00},
			want: []string{"0x1000-0x1010 r7+8 r6=exp:7600 r16=c-8"}},
		{name: "val_expression", instrs: []byte{0x16, 6, 1, 0x9c},
			want: []string{"0x1000-0x1010 r7+8 r6=vexp:9c r16=c-8"}},
		{name: "val_offset", instrs: []byte{0x14, 6, 2},
			want: []string{"0x1000-0x1010 r7+8 r6=v-16 r16=c-8"}},
		{name: "val_offset_sf", instrs: []byte{0x15, 6, 0x7f},
			want: []string{"0x1000-0x1010 r7+8 r6=v+8 r16=c-8"}},
		{name: "GNU_args_size", instrs: []byte{0x2e, 16},
			want: []string{"0x1000-0x1010 r7+8 r16=c-8 args=16"}},
		{name: "negate_ra_state", ca: 4, da: -8, cie: []byte{0x0c, 31, 0}, instrs: []byte{0x2d, 0x41, 0x2d},
			want: []string{"0x1000-0x1004 r31+0 ra-mangled", "0x1004-0x1010 r31+0"}},
		{name: "negate_ra_state_with_pc", ca: 4, da: -8, cie: []byte{0x0c, 31, 0}, instrs: []byte{0x2c},
			want: []string{"0x1000-0x1010 r31+0 ra-mangled"}},
		{name: "remember keeps ra state", ca: 4, da: -8, cie: []byte{0x0c, 31, 0}, instrs: []byte{0x2d, 0x0a, 0x2d, 0x41, 0x0b},
			want: []string{"0x1000-0x1004 r31+0", "0x1004-0x1010 r31+0 ra-mangled"}},
		{name: "nop", instrs: []byte{0, 0, 0},
			want: []string{"0x1000-0x1010 r7+8 r16=c-8"}},
		{name: "unknown opcode", instrs: []byte{0x41, 0x3f}, err: "unknown opcode 0x3f"},
		{name: "truncated operand", instrs: []byte{0x0e}, err: "DW_CFA_def_cfa_offset: operand runs past the end"},
		{name: "truncated expression", instrs: []byte{0x10, 6, 5, 0x76}, err: "expression of 5 bytes runs past the end"},
		{name: "absurd ULEB", instrs: []byte{0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, err: "LEB128 value does not fit in 64 bits"},
		{name: "offset overflows", instrs: []byte{0x05, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, err: "offset 9223372036854775807 * data alignment factor -8 overflows"},
		{name: "advance in CIE", cie: []byte{0x41}, err: "DW_CFA_advance_loc in the initial instructions"},
		{name: "restore_state across CIE", cie: []byte{0x0c, 7, 8, 0x0a, 0x0e, 16}, instrs: []byte{0x41, 0x0b},
			want: []string{"0x1000-0x1001 r7+16", "0x1001-0x1010 r7+8"}},
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%v/%s", order, tt.name), func(t *testing.T) {
				ca, da := tt.ca, tt.da
				if ca == 0 {
					ca = 1
				}
				if da == 0 {
					da = -8
				}
				cie := tt.cie
				if cie == nil {
					cie = x86CIE
				}
				instrs := tt.instrs
				// Multi-byte advance operands are in the section's order.
				if order == binary.BigEndian && len(instrs) > 0 {
					switch instrs[0] {
					case 0x03:
						instrs = cat([]byte{0x03}, order.(binary.AppendByteOrder).AppendUint16(nil, binary.LittleEndian.Uint16(instrs[1:])), instrs[3:])
					case 0x04:
						instrs = cat([]byte{0x04}, order.(binary.AppendByteOrder).AppendUint32(nil, binary.LittleEndian.Uint32(instrs[1:])), instrs[5:])
					case 0x01:
						instrs = cat([]byte{0x01}, order.(binary.AppendByteOrder).AppendUint64(nil, binary.LittleEndian.Uint64(instrs[1:])), instrs[9:])
					}
				}
				for _, eh := range []bool{true, false} {
					s := &secBuilder{order: order, eh: eh}
					c := s.simpleCIE(ca, da, 16, PEUData8, cie)
					s.simpleFDE(c, 0x1000, 0x10, instrs)
					src := DebugFrame
					if eh {
						src = EHFrame
					}
					rows, err := allRows(t, s.b, src, order)
					if tt.err != "" {
						if err == nil || !strings.Contains(err.Error(), tt.err) {
							t.Fatalf("%v: error %v, want %q", src, err, tt.err)
						}
						if !strings.Contains(err.Error(), "offset 0x") {
							t.Errorf("error %q does not name the offset", err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%v: %v", src, err)
					}
					if strings.Join(rows, "\n") != strings.Join(tt.want, "\n") {
						t.Errorf("%v rows:\n%s\nwant:\n%s", src, strings.Join(rows, "\n"), strings.Join(tt.want, "\n"))
					}
				}
			})
		}
	}
}

func TestRowLimits(t *testing.T) {
	var regs, stack []byte
	for i := 0; i <= maxRegisters; i++ {
		// Descending register numbers: the costly order for a sorted list.
		regs = append(regs, 0x05)
		regs = append(regs, ulebBytes(uint64(5000-i))...)
		regs = append(regs, 1)
	}
	for i := 0; i <= maxStack; i++ {
		stack = append(stack, 0x0a)
	}
	for name, instrs := range map[string][]byte{"registers": regs, "stack": stack} {
		t.Run(name, func(t *testing.T) {
			s := &secBuilder{order: binary.LittleEndian, eh: true}
			c := s.simpleCIE(1, -8, 16, PEUData8, x86CIE)
			s.simpleFDE(c, 0x1000, 0x10, instrs)
			_, err := allRows(t, s.b, EHFrame, binary.LittleEndian)
			if err == nil || !strings.Contains(err.Error(), "more than 1024 registers with rules or 1024 remembered states") {
				t.Errorf("error %v", err)
			}
		})
	}
}

// TestRowsNoAlloc checks that walking rows allocates nothing once the
// iterator's storage has grown.
func TestRowsNoAlloc(t *testing.T) {
	s := &secBuilder{order: binary.LittleEndian, eh: true}
	c := s.simpleCIE(1, -8, 16, PEUData8, x86CIE)
	for i := 0; i < 50; i++ {
		s.simpleFDE(c, uint64(0x1000+0x100*i), 0x100, []byte{0x41, 0x0e, 16, 0x86, 2, 0x0a, 0x02, 3, 0x0e, 0xa0, 0x01, 0x41, 0xc6, 0x0b, 0x03, 1, 0, 0x0e, 8, 0x10, 3, 1, 0x70, 0x41})
	}
	fr, err := ReadSection(s.b, EHFrame, PointerContext{Order: binary.LittleEndian, AddrSize: 8})
	if err != nil || len(fr.FDEs) != 50 {
		t.Fatal(err, fr.Errors)
	}
	var it RowIterator
	rows := 0
	walk := func() {
		for _, fde := range fr.FDEs {
			it.Reset(fr, fde)
			for {
				if _, err := it.Next(); err != nil {
					break
				}
				rows++
			}
		}
	}
	walk()
	if n := testing.AllocsPerRun(10, walk); n != 0 {
		t.Errorf("%v allocations per walk of %d rows", n, rows)
	}
}

// TestFastPathOperands checks the rows' fast path against the general
// path on the LEB128 operands it decodes: one byte, several, padded, at
// and past fastOperandLimit, an offset whose factored value overflows,
// truncated ones, in both byte orders.
func TestFastPathOperands(t *testing.T) {
	u := ulebBytes
	limit := uint64(fastOperandLimit)
	fdes := [][]byte{
		cat([]byte{0x0e}, u(16), []byte{0x41, 0x0e}, u(300), []byte{0x41, 0x0e}, u(limit-1), []byte{0x41, 0x0e}, u(limit), []byte{0x41}),
		{0x0e, 0x90, 0x80, 0x80, 0x00, 0x41, 0x86, 0x82, 0x80, 0x00, 0x41, 0x0d, 0x86, 0x80, 0x00, 0x41},
		cat([]byte{0x86}, u(limit-1), []byte{0x41, 0x83}, u(limit), []byte{0x41, 0x84}, u(1<<62), []byte{0x41}),
		cat([]byte{0x0c}, u(6), u(limit-1), []byte{0x41, 0x0c}, u(1<<40), u(8), []byte{0x41, 0x0c, 7}, u(limit), []byte{0x41}),
		cat([]byte{0x03, 0x10, 0x00, 0x0e}, u(1<<63), []byte{0x41}),
		{0x41, 0x0e, 0x90},
		{0x41, 0x86, 0x80},
		{0x0c, 0x07},
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		s := &secBuilder{order: order, eh: true}
		c := s.simpleCIE(1, -8, 16, PEUData8, x86CIE)
		for i, ins := range fdes {
			s.simpleFDE(c, uint64(0x1000+0x1000*i), 0x1000, ins)
		}
		fr, err := ReadSection(s.b, EHFrame, PointerContext{Order: order, AddrSize: 8})
		if err != nil || len(fr.FDEs) != len(fdes) {
			t.Fatal(err, fr.Errors)
		}
		if msg := compareFastSlow(fr); msg != "" {
			t.Errorf("%v: %s", order, msg)
		}
	}
}

// TestFastPathAgrees runs the fast path and the general decoder side by
// side on every golden input.
func TestFastPathAgrees(t *testing.T) {
	var files []string
	for _, pat := range []string{"../testdata/gas/*/*.o", "../testdata/link/*/*", "../testdata/cc/*/*/*.o"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if !testing.Short() {
		m, _ := filepath.Glob("/root/.rustup/toolchains/stable-*/lib/libLLVM*.so*")
		files = append(files, m...)
	}
	n := 0
	for _, path := range files {
		f, err := elf.Open(path)
		if err != nil {
			continue
		}
		for _, src := range []Source{EHFrame, DebugFrame} {
			fr, err := Read(f, src)
			if err != nil {
				continue
			}
			if len(fr.FDEs) > 30000 {
				fr.FDEs = fr.FDEs[:30000] // enough of libLLVM
			}
			if msg := compareFastSlow(fr); msg != "" {
				t.Errorf("%s: %s", path, msg)
			}
			n++
		}
		f.Close()
	}
	if n == 0 {
		t.Fatal("no golden inputs")
	}
}
