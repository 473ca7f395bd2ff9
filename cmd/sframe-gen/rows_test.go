package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

func rowsCLI(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	c := &cli{stdout: &o, stderr: &e}
	code = c.main(append([]string{"rows"}, args...))
	return o.String(), e.String(), code
}

// rowsFDE is the JSON form of one FDE's rows.
type rowsFDE struct {
	Start   uint64  `json:"start"`
	End     uint64  `json:"end"`
	Section *int    `json:"section"`
	Rows    []rowJS `json:"rows"`
}

type rowJS struct {
	PC  uint64 `json:"pc"`
	CFA struct {
		Reg    *uint64 `json:"reg"`
		Offset *int64  `json:"offset"`
		Expr   *string `json:"expr"`
	} `json:"cfa"`
	Regs map[string]struct {
		Rule   string  `json:"rule"`
		Offset *int64  `json:"offset"`
		Reg    *uint64 `json:"reg"`
		Expr   *string `json:"expr"`
	} `json:"regs"`
	RAMangled bool `json:"ra_mangled"`
}

func TestRowsJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "gas", "*", "*.o"))
	linked, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "link", "*", "*.so"))
	files = append(files, linked...)
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, file := range files {
		if strings.HasSuffix(file, ".gs.o") || strings.Contains(file, "nocfi") {
			continue
		}
		out, errOut, code := rowsCLI("--json", file)
		f, err := elf.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		frames, err := cfi.Read(f, cfi.Auto)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(frames.FDEs) {
			t.Errorf("%s: %d lines for %d FDEs", file, len(lines), len(frames.FDEs))
			continue
		}
		wantErr := len(frames.Errors) > 0
		if (code != 0) != wantErr || (errOut != "") != wantErr {
			t.Errorf("%s: exit %d, stderr %q", file, code, errOut)
		}
		for i, line := range lines {
			var fde rowsFDE
			if err := json.Unmarshal([]byte(line), &fde); err != nil {
				t.Fatalf("%s: line %d: %v: %s", file, i+1, err, line)
			}
			want := frames.FDEs[i]
			if fde.Start != want.Start || fde.End != want.End() || (fde.Section == nil) != !frames.Relocatable {
				t.Errorf("%s: line %d: %+v, want FDE %+v", file, i+1, fde, want)
			}
			if len(fde.Rows) == 0 || fde.Rows[0].PC != fde.Start {
				if !wantErr {
					t.Errorf("%s: line %d: first row not at start: %s", file, i+1, line)
				}
				continue
			}
			for _, r := range fde.Rows {
				if (r.CFA.Expr == nil) == (r.CFA.Reg == nil) {
					t.Errorf("%s: line %d: cfa %s", file, i+1, line)
				}
				for reg, rule := range r.Regs {
					ok := false
					switch rule.Rule {
					case "undefined", "same_value":
						ok = rule.Offset == nil && rule.Reg == nil && rule.Expr == nil
					case "offset", "val_offset":
						ok = rule.Offset != nil && rule.Reg == nil
					case "register":
						ok = rule.Reg != nil && rule.Offset == nil
					case "expression", "val_expression":
						ok = rule.Expr != nil && rule.Offset == nil
					}
					if !ok {
						t.Errorf("%s: line %d: register %s: %+v", file, i+1, reg, rule)
					}
				}
			}
		}
	}
}

func TestRowsExample(t *testing.T) {
	file := filepath.Join("..", "..", "testdata", "gas", "x86_64", "basic.o")
	out, _, code := rowsCLI("--json", file)
	if code != 0 {
		t.Fatalf("exit %d on %s", code, file)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	// The first FDE of basic.s starts at 0 in .text: CFA rsp+8, RA at CFA-8.
	prefix := `{"start":0,"end":`
	row0 := `"rows":[{"pc":0,"cfa":{"reg":7,"offset":8},"regs":{"16":{"rule":"offset","offset":-8}}}`
	if !strings.HasPrefix(first, prefix) || !strings.Contains(first, row0) {
		t.Errorf("first line %s", first)
	}
	text, _, code := rowsCLI(file)
	if code != 0 || !strings.Contains(text, "  0x0  cfa r7+8  r16 c-8\n") {
		t.Errorf("text form (exit %d):\n%s", code, text)
	}
}

// TestRowsEntryError breaks one FDE's instructions: its error goes to
// stderr with the section offset, exit status 1, and the other FDEs are
// still printed.
func TestRowsEntryError(t *testing.T) {
	file := filepath.Join("..", "..", "testdata", "gas", "x86_64", "basic.o")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.EHFrame)
	if err != nil || len(frames.FDEs) < 2 {
		t.Fatalf("%v, %d FDEs", err, len(frames.FDEs))
	}
	var fde *cfi.FDE
	for _, x := range frames.FDEs {
		if len(x.Instructions) > 0 {
			fde = x
			break
		}
	}
	if fde == nil {
		t.Fatal("no FDE with instructions")
	}
	data[f.Section(".eh_frame").Offset+fde.InstructionsOffset] = 0x3f // no such opcode
	broken := filepath.Join(t.TempDir(), "broken.o")
	if err := os.WriteFile(broken, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := rowsCLI("--json", broken)
	want := fmt.Sprintf("sframe-gen: %s: .eh_frame: offset %#x: instruction at offset %#x: unknown opcode 0x3f\n", broken, fde.Offset, fde.InstructionsOffset)
	if code != 1 || errOut != want {
		t.Errorf("exit %d, stderr %q, want %q", code, errOut, want)
	}
	if n := strings.Count(out, "\n"); n != len(frames.FDEs) {
		t.Errorf("%d lines for %d FDEs", n, len(frames.FDEs))
	}
}

func TestRowsUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"--eh-frame", "--debug-frame", "x"}, {"--bogus", "x"}} {
		if _, errOut, code := rowsCLI(args...); code != 2 || !strings.HasPrefix(errOut, "sframe-gen: ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
	if _, errOut, code := rowsCLI("/nonexistent"); code != 1 || !strings.HasPrefix(errOut, "sframe-gen: /nonexistent: ") {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	file := filepath.Join("..", "..", "testdata", "gas", "x86_64", "basic.o")
	if _, errOut, code := rowsCLI("--debug-frame", file); code != 1 || !strings.Contains(errOut, "no .debug_frame section") {
		t.Errorf("--debug-frame: exit %d, stderr %q", code, errOut)
	}
	if out, _, code := rowsCLI("--help"); code != 0 || !strings.Contains(out, "--debug-frame") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}
