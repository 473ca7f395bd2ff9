package cfi_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// rowsLog is the writer of WriteRows's tests: what was written and the
// errors reported, in the order they came.
type rowsLog struct{ bytes.Buffer }

func (l *rowsLog) onError(err error) { fmt.Fprintf(&l.Buffer, "ERROR %v\n", err) }

// appendAll is every FDE's rows of frames, as AppendRowsText or
// AppendRowsJSON writes them one at a time.
func appendAll(t *testing.T, frames *cfi.Frames, asJSON bool, members []byte) string {
	t.Helper()
	var b []byte
	var it cfi.RowIterator
	for _, fde := range frames.FDEs {
		var err error
		if asJSON {
			b, err = cfi.AppendRowsJSON(b, frames, fde, &it, members)
		} else {
			b, err = cfi.AppendRowsText(b, frames, fde, &it)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return string(b)
}

// TestWriteRows checks WriteRows against AppendRowsText and
// AppendRowsJSON on a shared library: every FDE's rows in order, after a
// line naming the file (text) or with a "file" member (JSON) when it is
// named, and the entry errors in section order between them.
func TestWriteRows(t *testing.T) {
	f, err := elf.Open("../testdata/link/x86_64/direct.so")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil || len(frames.FDEs) < 3 {
		t.Fatalf("%v, %d FDEs", err, len(frames.FDEs))
	}
	text, jsonLines := appendAll(t, frames, false, nil), appendAll(t, frames, true, nil)
	named := appendAll(t, frames, true, []byte(`"file":"lib.a(x.o)",`))
	for _, tc := range []struct {
		name   string
		asJSON bool
		want   string
	}{
		{"", false, text},
		{"lib.a(x.o)", false, "lib.a(x.o):\n" + text},
		{"", true, jsonLines},
		{"lib.a(x.o)", true, named},
	} {
		var out rowsLog
		if err := cfi.WriteRows(&out, frames, tc.name, tc.asJSON, out.onError); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("name %q, JSON %v:\n%s\nwant\n%s", tc.name, tc.asJSON, out.String(), tc.want)
		}
	}

	// An entry error before the first FDE, one between the first two FDEs,
	// one after the last.
	withErrs := *frames
	before := &cfi.EntryError{Section: ".eh_frame", Offset: 0, Err: errors.New("before")}
	between := &cfi.EntryError{Section: ".eh_frame", Offset: frames.FDEs[0].Offset + 1, Err: errors.New("between")}
	after := &cfi.EntryError{Section: ".eh_frame", Offset: frames.FDEs[len(frames.FDEs)-1].Offset + 1, Err: errors.New("after")}
	withErrs.Errors = []*cfi.EntryError{before, between, after}
	var out rowsLog
	if err := cfi.WriteRows(&out, &withErrs, "x", false, out.onError); err != nil {
		t.Fatal(err)
	}
	var it cfi.RowIterator
	first, _ := cfi.AppendRowsText(nil, frames, frames.FDEs[0], &it)
	rest := strings.TrimPrefix(text, string(first))
	want := "x:\nERROR " + before.Error() + "\n" + string(first) + "ERROR " + between.Error() + "\n" + rest + "ERROR " + after.Error() + "\n"
	if out.String() != want {
		t.Errorf("with entry errors:\n%s\nwant\n%s", out.String(), want)
	}
}

// TestWriteRowsInstructionError breaks one FDE's instructions: its error
// is reported after the rows before it, and the FDEs after it are still
// written.
func TestWriteRowsInstructionError(t *testing.T) {
	data, err := os.ReadFile("../testdata/gas/x86_64/basic.o")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.EHFrame)
	if err != nil {
		t.Fatal(err)
	}
	broken := -1
	for i, fde := range frames.FDEs[:len(frames.FDEs)-1] {
		if len(fde.Instructions) > 0 {
			broken = i
			break
		}
	}
	if broken < 0 {
		t.Fatalf("no FDE with instructions before the last of %d", len(frames.FDEs))
	}
	fde := frames.FDEs[broken]
	data[f.Section(".eh_frame").Offset+fde.InstructionsOffset] = 0x3f // no such opcode
	f, _ = elf.NewFile(bytes.NewReader(data))
	frames, err = cfi.Read(f, cfi.EHFrame)
	if err != nil {
		t.Fatal(err)
	}
	var out rowsLog
	if err := cfi.WriteRows(&out, frames, "", true, out.onError); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(frames.FDEs)+1 {
		t.Fatalf("%d lines for %d FDEs and an error:\n%s", len(lines), len(frames.FDEs), out.String())
	}
	want := fmt.Sprintf("ERROR .eh_frame: offset %#x: instruction at offset %#x: unknown opcode 0x3f", fde.Offset, fde.InstructionsOffset)
	if lines[broken+1] != want {
		t.Errorf("line %d: %q, want %q after the broken FDE's row object\n%s", broken+1, lines[broken+1], want, out.String())
	}
}

// Print the row tables of an object as "sframe-gen rows lib.a" prints a
// member of an archive: after a line naming it, the entry errors (none
// here) reported between the FDEs.
func ExampleWriteRows() {
	f, err := elf.Open("../testdata/gas/x86_64/addr2.o")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		log.Fatal(err)
	}
	err = cfi.WriteRows(os.Stdout, frames, "lib.a(addr2.o)", false, func(err error) { fmt.Println("error:", err) })
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// lib.a(addr2.o):
	// FDE 0x18 pc 0x0..0x12f CIE 0x0 section 1
	//   0x0  cfa r7+8  r16 c-8
	//   0x1  cfa r7+16  r6 c-16  r16 c-8
	//   0x12e  cfa r7+8  r6 c-16  r16 c-8
	// FDE 0x34 pc 0x12f..0x22e CIE 0x0 section 1
	//   0x12f  cfa r7+8  r16 c-8
	//   0x130  cfa r7+16  r16 c-8
	//   0x22d  cfa r7+8  r16 c-8
	// FDE 0x4c pc 0x22e..0x32e CIE 0x0 section 1
	//   0x22e  cfa r7+8  r16 c-8
	//   0x22f  cfa r7+16  r16 c-8
	//   0x32d  cfa r7+8  r16 c-8
}
