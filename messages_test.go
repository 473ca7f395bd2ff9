package sframegen

import (
	"errors"
	"path/filepath"
	"regexp"
	"testing"
)

// TestAppendMessages checks the messages of what Process did: with
// verbose what was written where (a linked file's address and segment,
// an object's relocations), what is up to date, the objects without CFI,
// the warnings after a success only, and names printed safely.
func TestAppendMessages(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ in, where string }{
		{"testdata/link/x86_64/direct.so", `at 0x[0-9a-f]+, PT_GNU_SFRAME`},
		{"testdata/link/x86_64/demo.pic.o", `with \.rela\.sframe`},
	} {
		out := filepath.Join(dir, filepath.Base(tc.in))
		o, err := WriteFile(tc.in, out, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := o.AppendMessages(nil, tc.in, out, false, false, nil); len(got) != 0 {
			t.Errorf("%s, not verbose: %q, want nothing", tc.in, got)
		}
		wrote := regexp.MustCompile(`^sframe-gen: ` + regexp.QuoteMeta(out) + `: wrote \.sframe \([0-9]+ bytes, [0-9]+ FDEs, [0-9]+ FREs, ([0-9]+ FDEs? sharing an earlier one's FREs|one block of FREs per function: .+)\) ` + tc.where + "\n$")
		if got := o.AppendMessages(nil, tc.in, out, true, false, nil); !wrote.Match(got) {
			t.Errorf("%s, verbose: %q, want %s", tc.in, got, wrote)
		}
		again, err := WriteFile(out, out, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := "sframe-gen: " + out + ": up to date: its SFrame is already what would be written\n"
		if got := string(again.AppendMessages(nil, out, out, true, false, nil)); got != want {
			t.Errorf("%s again, verbose: %q, want %q", tc.in, got, want)
		}
	}
	o := Outcome{Status: NoCFI, Reports: []Report{{Member: "m\x1b.o"}}, Warnings: []string{"a warning"}}
	want := "sframe-gen: \"a\\n\"(\"m\\x1b.o\"): no call-frame information; nothing to generate\n" +
		"sframe-gen: \"a\\n\": a warning\n"
	if got := string(o.AppendMessages([]byte{}, "a\n", "a\n", true, false, nil)); got != want {
		t.Errorf("no CFI, verbose: %q, want %q", got, want)
	}
	if got := o.AppendMessages(nil, "a", "a", true, false, errors.New("failed")); string(got) != "sframe-gen: a(\"m\\x1b.o\"): no call-frame information; nothing to generate\n" {
		t.Errorf("no CFI, verbose, failed: %q (no warning after an error)", got)
	}
	for n, want := range map[int]string{0: "0 FDEs", 1: "1 FDE", 2: "2 FDEs"} {
		if got := count(n, "FDE"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
