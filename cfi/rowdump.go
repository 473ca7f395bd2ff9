package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// runRows prints the CFI row table of every FDE (of a static archive: of
// each member with CFI): with --json one JSON object per FDE and line,
// else a readable text form. Entry errors go to stderr and make the exit
// status 1; the other FDEs are still printed.
func (c *cli) runRows(args []string) int {
	fs := pflag.NewFlagSet("sframe-gen rows", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	help := helpFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per FDE and line")
	source := cfiSourceFlags(fs, "read")
	budget := c.memoryLimitFlag(fs, readMemoryUsage)
	setUsage(fs, c.stdout, "sframe-gen rows [--json] [--eh-frame|--debug-frame] FILE...",
		"Print the CFI row table of every FDE of FILE: the CFA and register rules from\n"+
			"each address on, as the call-frame information describes them; of a static\n"+
			"archive, of each member with CFI, after a line naming it ARCHIVE(MEMBER); of\n"+
			"several FILEs, each after a line naming it.")
	if code, done := c.parseFiles(fs, args, help, "rows"); done {
		return code
	}
	src, err := source()
	if err != nil {
		return c.fail("", commandUsage("rows", err.Error()))
	}
	b, err := budget()
	if err != nil {
		return c.fail("", commandUsage("rows", err.Error()))
	}
	status := exitOK
	for _, file := range fs.Args() {
		status = max(status, c.rowsFile(file, src, fs.NArg() > 1, *asJSON, b))
	}
	return status
}

// rowsFile prints the rows of file (named: after a line naming it) and
// returns the exit status.
func (c *cli) rowsFile(file string, src cfi.Source, named, asJSON bool, b *memoryBudget) int {
	status := exitOK
	err := readInputs(file, "no member has call-frame information", b, func(in elfInput) bool {
		in.named = in.member || named
		if in.err != nil {
			status = c.fail(in.name, in.err)
			return true
		}
		if err := in.meter.ChargeCFI(in.f, src); err != nil {
			status = c.fail(in.name, err)
			return true
		}
		frames, err := cfi.Read(in.f, src)
		if in.member && errors.Is(err, cfi.ErrNoCFI) {
			return false // an object without CFI
		}
		if err != nil {
			status = c.fail(in.name, err)
			return true
		}
		w := bufio.NewWriter(c.stdout)
		if st := printRows(w, c.stderr, in, frames, asJSON); st != exitOK {
			status = st
		}
		if err := w.Flush(); err != nil {
			status = c.fail(in.name, err)
		}
		return true
	})
	if err != nil {
		return c.fail(file, err)
	}
	return status
}

// printRows prints every FDE's rows and, in section order with them, the
// entry errors. The rows of an archive's member follow a line naming it
// (text), or carry a "file" member (JSON).
func printRows(w *bufio.Writer, stderr io.Writer, in elfInput, frames *cfi.Frames, asJSON bool) int {
	status := exitOK
	report := func(err error) {
		w.Flush()
		fmt.Fprintf(stderr, "sframe-gen: %s: %v\n", displayName(in.name), err)
		status = exitFailure
	}
	var jsonFile []byte // `"file":"ARCHIVE(MEMBER)",` in JSON lines
	switch {
	case in.named && asJSON:
		name, _ := json.Marshal(in.name) // a string always marshals
		jsonFile = append(append([]byte(`"file":`), name...), ',')
	case in.named:
		fmt.Fprintf(w, "%s:\n", in.name)
	}
	errs := frames.Errors
	var it cfi.RowIterator
	var buf []byte
	for _, fde := range frames.FDEs {
		for len(errs) > 0 && errs[0].Offset < fde.Offset {
			report(errs[0])
			errs = errs[1:]
		}
		it.Reset(frames, fde)
		var err error
		if asJSON {
			buf, err = appendFDEJSON(buf[:0], jsonFile, frames, fde, &it)
		} else {
			buf, err = appendFDEText(buf[:0], fde, &it)
		}
		w.Write(buf)
		if err != nil {
			report(err)
		}
	}
	for _, e := range errs {
		report(e)
	}
	return status
}

// appendFDEJSON appends the FDE's JSON line, file (a "file" member and
// its comma, or nothing) first. On an error the rows read so far are still
// printed.
func appendFDEJSON(b, file []byte, frames *cfi.Frames, fde *cfi.FDE, it *cfi.RowIterator) ([]byte, error) {
	b = append(b, '{')
	b = append(b, file...)
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
		var row *cfi.Row
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
			case cfi.RuleOffset, cfi.RuleValOffset:
				b = append(b, `,"offset":`...)
				b = strconv.AppendInt(b, r.Rule.Offset, 10)
			case cfi.RuleRegister:
				b = append(b, `,"reg":`...)
				b = strconv.AppendUint(b, r.Rule.Reg, 10)
			case cfi.RuleExpression, cfi.RuleValExpression:
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

// appendFDEText appends the FDE's rows in a readable form:
//
//	FDE 0x18 pc 0x1000..0x1040 CIE 0x0
//	  0x1000  cfa r7+8  r16 c-8
func appendFDEText(b []byte, fde *cfi.FDE, it *cfi.RowIterator) ([]byte, error) {
	b = fmt.Appendf(b, "FDE %#x pc %#x..%#x CIE %#x", fde.Offset, fde.Start, fde.End(), fde.CIE.Offset)
	if fde.Section != 0 {
		b = fmt.Appendf(b, " section %d", fde.Section)
	}
	b = append(b, '\n')
	var err error
	for {
		var row *cfi.Row
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
			case cfi.RuleUndefined:
				b = append(b, 'u')
			case cfi.RuleSameValue:
				b = append(b, 's')
			case cfi.RuleOffset:
				b = fmt.Appendf(b, "c%+d", r.Rule.Offset)
			case cfi.RuleValOffset:
				b = fmt.Appendf(b, "v%+d", r.Rule.Offset)
			case cfi.RuleRegister:
				b = fmt.Appendf(b, "r%d", r.Rule.Reg)
			case cfi.RuleExpression:
				b = fmt.Appendf(b, "exp(%x)", r.Rule.Expr)
			case cfi.RuleValExpression:
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
