package cfi

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// AppendRowsJSON appends the row table of fde, one of frames' FDEs, as
// one JSON object and a newline, in the form "sframe-gen rows --json"
// prints (docs/rows.md):
//
//	{"start":4096,"end":4160,"rows":[{"pc":4096,"cfa":{"reg":7,"offset":8},"regs":{"16":{"rule":"offset","offset":-8}}}]}
//
// "section" follows "end" in a relocatable object; a register's rule has
// "offset", "reg" or "expr" (hex) as its kind needs; a CFA expression is
// {"expr":HEX}. members, when not empty, is written first in the object:
// members of the caller's and their comma (`"file":"a.o",`).
//
// it is scratch state, reset to fde (a zero RowIterator will do). On an
// error the rows read before it are appended and the object closed.
func AppendRowsJSON(b []byte, frames *Frames, fde *FDE, it *RowIterator, members []byte) ([]byte, error) {
	it.Reset(frames, fde)
	b = append(b, '{')
	b = append(b, members...)
	b = append(b, `"start":`...)
	b = strconv.AppendUint(b, fde.Start, 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendUint(b, fde.End(), 10)
	if frames.Relocatable {
		b = append(b, `,"section":`...)
		b = strconv.AppendInt(b, int64(fde.Section), 10)
	}
	b = append(b, `,"rows":[`...)
	var err error
	for n := 0; ; n++ {
		var row *Row
		row, err = it.Next()
		if err != nil {
			break
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"pc":`...)
		b = strconv.AppendUint(b, row.PC, 10)
		b = append(b, `,"cfa":`...)
		if row.CFA.IsExpression() {
			b = append(b, `{"expr":"`...)
			b = hex.AppendEncode(b, row.CFA.Expr)
			b = append(b, `"}`...)
		} else {
			b = append(b, `{"reg":`...)
			b = strconv.AppendUint(b, row.CFA.Reg, 10)
			b = append(b, `,"offset":`...)
			b = strconv.AppendInt(b, row.CFA.Offset, 10)
			b = append(b, '}')
		}
		b = append(b, `,"regs":{`...)
		for i, r := range row.Regs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = strconv.AppendUint(b, r.Column, 10)
			b = append(b, `":{"rule":"`...)
			b = append(b, r.Rule.Kind.String()...)
			b = append(b, '"')
			switch r.Rule.Kind {
			case RuleOffset, RuleValOffset:
				b = append(b, `,"offset":`...)
				b = strconv.AppendInt(b, r.Rule.Offset, 10)
			case RuleRegister:
				b = append(b, `,"reg":`...)
				b = strconv.AppendUint(b, r.Rule.Reg, 10)
			case RuleExpression, RuleValExpression:
				b = append(b, `,"expr":"`...)
				b = hex.AppendEncode(b, r.Rule.Expr)
				b = append(b, '"')
			}
			b = append(b, '}')
		}
		b = append(b, '}')
		if row.RAMangled {
			b = append(b, `,"ra_mangled":true`...)
		}
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return b, err
}

// AppendRowsText appends the row table of fde, one of frames' FDEs, in
// the readable form "sframe-gen rows" prints (docs/rows.md): a line naming
// the FDE (its offset in the section, the addresses it covers, its CIE's
// offset, and in a relocatable object its section), then a line per row,
// the CFA rule and the rule of each register column:
//
//	FDE 0x18 pc 0x1000..0x1040 CIE 0x0
//	  0x1000  cfa r7+8  r16 c-8
//
// A rule is u (undefined), s (same value), c+N (saved at CFA+N), v+N (the
// value CFA+N), rN (in register N), exp(HEX) or vexp(HEX) (DWARF
// expressions); ra-mangled ends a row whose return address is signed.
//
// it is scratch state, reset to fde (a zero RowIterator will do). On an
// error the rows read before it are appended.
func AppendRowsText(b []byte, frames *Frames, fde *FDE, it *RowIterator) ([]byte, error) {
	it.Reset(frames, fde)
	b = fmt.Appendf(b, "FDE %#x pc %#x..%#x CIE %#x", fde.Offset, fde.Start, fde.End(), fde.CIE.Offset)
	if fde.Section != 0 {
		b = fmt.Appendf(b, " section %d", fde.Section)
	}
	b = append(b, '\n')
	var err error
	for {
		var row *Row
		row, err = it.Next()
		if err != nil {
			break
		}
		b = fmt.Appendf(b, "  %#x  cfa ", row.PC)
		if row.CFA.IsExpression() {
			b = fmt.Appendf(b, "exp(%x)", row.CFA.Expr)
		} else {
			b = fmt.Appendf(b, "r%d%+d", row.CFA.Reg, row.CFA.Offset)
		}
		for _, r := range row.Regs {
			b = fmt.Appendf(b, "  r%d ", r.Column)
			switch r.Rule.Kind {
			case RuleUndefined:
				b = append(b, 'u')
			case RuleSameValue:
				b = append(b, 's')
			case RuleOffset:
				b = fmt.Appendf(b, "c%+d", r.Rule.Offset)
			case RuleValOffset:
				b = fmt.Appendf(b, "v%+d", r.Rule.Offset)
			case RuleRegister:
				b = fmt.Appendf(b, "r%d", r.Rule.Reg)
			case RuleExpression:
				b = fmt.Appendf(b, "exp(%x)", r.Rule.Expr)
			case RuleValExpression:
				b = fmt.Appendf(b, "vexp(%x)", r.Rule.Expr)
			}
		}
		if row.RAMangled {
			b = append(b, "  ra-mangled"...)
		}
		b = append(b, '\n')
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return b, err
}

// WriteRows writes the row table of every FDE of frames to w as
// "sframe-gen rows" prints it: with asJSON one JSON object per FDE and
// line (AppendRowsJSON), else the text form (AppendRowsText). A file
// named by name (a member of an archive, or one of several files; ""
// names none) gets a line "NAME:" before its rows, or a "file" member in
// each JSON object. In section order with the FDEs' rows, onError is
// called with each entry error of frames and each error of an FDE's
// instructions, after the rows read before it; the other FDEs are still
// written. The error is w's.
func WriteRows(w io.Writer, frames *Frames, name string, asJSON bool, onError func(error)) error {
	var jsonFile []byte // `"file":"ARCHIVE(MEMBER)",` in JSON lines
	var buf []byte
	switch {
	case name != "" && asJSON:
		q, _ := json.Marshal(name) // a string always marshals
		jsonFile = append(append([]byte(`"file":`), q...), ',')
	case name != "":
		buf = append(append(buf, name...), ":\n"...)
	}
	errs := frames.Errors
	var it RowIterator
	for _, fde := range frames.FDEs {
		for len(errs) > 0 && errs[0].Offset < fde.Offset {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
			onError(errs[0])
			errs = errs[1:]
		}
		var err error
		if asJSON {
			buf, err = AppendRowsJSON(buf, frames, fde, &it, jsonFile)
		} else {
			buf, err = AppendRowsText(buf, frames, fde, &it)
		}
		if _, werr := w.Write(buf); werr != nil {
			return werr
		}
		buf = buf[:0]
		if err != nil {
			onError(err)
		}
	}
	if _, err := w.Write(buf); err != nil {
		return err
	}
	for _, e := range errs {
		onError(e)
	}
	return nil
}
