package sframegen

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// TestAppendReport checks a tree's report lines: one JSON object a line,
// names escaped so that a line is one word, given byte for byte when not
// UTF-8, C1 control characters escaped, the size of regular files only.
func TestAppendReport(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    TreeFile
		out  Outcome
		want string
	}{
		{"patched", TreeFile{Path: "lib/a b.so", Size: 4096, Mode: 0o755}, Outcome{Status: Patched, Kind: "shared-library", Arch: "x86_64", FDEs: 12},
			`{"file":"lib/a\u0020b.so","status":"patched","kind":"shared-library","arch":"x86_64","bytes":4096,"fdes":12}`},
		{"links and output", TreeFile{Path: "a:b", Output: "out/a:b", Links: []string{"c d", "e"}, Size: 10, Mode: 0o644}, Outcome{Status: UpToDate, FDEs: 1},
			`{"file":"a\u003ab","status":"up-to-date","bytes":10,"fdes":1,"output":"out/a\u003ab","links":["c\u0020d","e"]}`},
		{"not UTF-8", TreeFile{Path: "x\xff", Links: []string{"ok", "y\xfe"}, Mode: 0o644}, Outcome{Status: Skipped, Reason: "not ELF <&>"},
			`{"file":"x\ufffd","status":"skipped","bytes":0,"fdes":0,"reason":"not ELF \u003c\u0026\u003e","links":["ok","y\ufffd"],"file_bytes":"eP8=","links_bytes":["b2s=","ef4="]}`},
		{"C1 control and a directory", TreeFile{Path: "d\u009b2J", Size: 4096, Mode: fs.ModeDir}, Outcome{Status: Failed, Reason: "e\u0085"},
			`{"file":"d\u009b2J","status":"failed","bytes":0,"fdes":0,"reason":"e\u0085"}`},
		{"unreadable", TreeFile{Path: "gone", Size: 5, Err: errors.New("x")}, Outcome{Status: Failed},
			`{"file":"gone","status":"failed","bytes":0,"fdes":0}`},
	} {
		got := string(tc.f.AppendReport([]byte("before\n"), &tc.out))
		if got != "before\n"+tc.want+"\n" {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
			continue
		}
		line := strings.TrimPrefix(got, "before\n")
		var back struct {
			File      string
			FileBytes []byte `json:"file_bytes"`
		}
		if err := json.Unmarshal([]byte(line), &back); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if exact := string(back.FileBytes); back.File != tc.f.Path && exact != tc.f.Path {
			t.Errorf("%s: name read back %q (%q), want %q", tc.name, back.File, exact, tc.f.Path)
		}
	}
}
