package verify

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestFindingString(t *testing.T) {
	tests := []struct {
		fd   Finding
		want string
	}{
		{Finding{Msg: "whole section"}, "whole section"},
		{Finding{Msg: "one address", Addr: 0x10, End: 0x11, Bytes: 1}, "one address"},
		{Finding{Msg: "a range", Addr: 0x10, End: 0x20, Bytes: 0x10}, "a range [0x10, 0x20)"},
		{Finding{Msg: "a pattern", Addr: 0x10, End: 0x40, Bytes: 6}, "a pattern [0x10, 0x40), 6 addresses"},
	}
	for _, tt := range tests {
		if got := tt.fd.String(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.fd, got, tt.want)
		}
	}
}

func TestReportSummary(t *testing.T) {
	tests := []struct {
		r    Report
		want string
	}{
		{Report{}, "0 functions checked, 0 addresses covered, 0 problems (0 notes; 0 of 0 CFI functions not covered by SFrame)"},
		{Report{Functions: 1, Addresses: 1, Problems: make([]Finding, 1), Notes: make([]Finding, 1), CFIFunctions: 2,
			Uncovered: make([]Function, 1), SignalNoFREs: 1},
			"1 function checked, 1 address covered, 1 problem (1 note; 1 of 2 CFI functions not covered by SFrame; 1 signal frame without FREs not compared)"},
		{Report{Functions: 3, Addresses: 7, SignalNoFREs: 2},
			"3 functions checked, 7 addresses covered, 0 problems (0 notes; 0 of 0 CFI functions not covered by SFrame; 2 signal frames without FREs not compared)"},
	}
	for _, tt := range tests {
		if got := tt.r.Summary(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

// TestReportJSON checks the JSON form: findings about the whole section
// have null functions and addresses, the others name theirs with the
// caller's names, and the uncovered functions are an array, not null.
func TestReportJSON(t *testing.T) {
	r := &Report{
		Problems: []Finding{{Kind: KindFormat, FDE: -1, Msg: "bad header"}},
		Notes:    []Finding{{Kind: KindNote, InFunction: true, Section: 2, Func: 0x40, Addr: 0x44, End: 0x48, Bytes: 4, FDE: 3, Msg: "quirk"}},
	}
	name := func(section int, start uint64) string { return fmt.Sprintf("f%d@%#x", section, start) }
	b, err := json.Marshal(r.JSON("a.o", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"file":"a.o","ok":false`,
		`{"kind":"format","function":null,"start":null,"addr":null,"end":null,"fde":null,"message":"bad header","line":"bad header"}`,
		`{"kind":"note","function":"f2@0x40","section":2,"start":64,"addr":68,"end":72,"bytes":4,"fde":3,"message":"quirk","line":"quirk [0x44, 0x48)"}`,
		`"uncovered":[]`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s\nlacks %s", b, want)
		}
	}
}

// TestReportWriteText checks the text form: a line per problem and note,
// those in a function after FUNCTION@0xADDR (the caller's names), the
// functions not covered only with verbose, and the summary last, every
// line after the caller's prefix.
func TestReportWriteText(t *testing.T) {
	r := &Report{
		Functions: 2, Addresses: 0x20, CFIFunctions: 4,
		Problems: []Finding{
			{Kind: KindFormat, FDE: -1, Msg: "bad header"},
			{Kind: KindMismatch, InFunction: true, Section: 1, Func: 0x40, Addr: 0x44, End: 0x48, Bytes: 4, Msg: "CFA differs"},
		},
		Notes:     []Finding{{Kind: KindNote, InFunction: true, Func: 0x60, Addr: 0x60, End: 0x61, Bytes: 1, Msg: "quirk"}},
		Uncovered: []Function{{Start: 0x80, Size: 0x10}, {Section: 2, Start: 0x90, Size: 8, Signal: true}},
	}
	name := func(section int, start uint64) string { return fmt.Sprintf("f%d_%x", section, start) }
	lines := `p: bad header
p: f1_40@0x44: CFA differs [0x44, 0x48)
p: note: f0_60@0x60: quirk
`
	uncovered := `p: f0_80: not covered by SFrame: CFI describes [0x80, 0x90)
p: f2_90: not covered by SFrame (signal frame): CFI describes [0x90, 0x98)
`
	summary := "p: " + r.Summary() + "\n"
	for _, verbose := range []bool{false, true} {
		var b strings.Builder
		if err := r.WriteText(&b, "p: ", name, verbose); err != nil {
			t.Fatal(err)
		}
		want := lines + summary
		if verbose {
			want = lines + uncovered + summary
		}
		if b.String() != want {
			t.Errorf("verbose %v:\n%s\nwant\n%s", verbose, b.String(), want)
		}
	}
}
