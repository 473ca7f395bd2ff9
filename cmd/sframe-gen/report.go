package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	sframegen "github.com/sframe-gen/sframe-gen"
)

// reportLine is one object of --report: what the batch did with one file.
// A name that is not UTF-8 (JSON strings are) is in its field with each
// byte that is not part of a UTF-8 character as U+FFFD, and exact, byte
// for byte, in the field of the same name with _bytes (base64).
type reportLine struct {
	File        string   `json:"file"`
	Status      string   `json:"status"` // patched, up-to-date, no-cfi, skipped, failed
	Kind        string   `json:"kind,omitempty"`
	Arch        string   `json:"arch,omitempty"`
	Bytes       int64    `json:"bytes"`
	FDEs        int      `json:"fdes"`
	Reason      string   `json:"reason,omitempty"`
	Output      string   `json:"output,omitempty"`
	Links       []string `json:"links,omitempty"`
	FileBytes   []byte   `json:"file_bytes,omitempty"`
	OutputBytes []byte   `json:"output_bytes,omitempty"`
	LinksBytes  [][]byte `json:"links_bytes,omitempty"`
}

// MarshalJSON encodes the line with its names as reportNames.
func (l reportLine) MarshalJSON() ([]byte, error) {
	links := make([]reportName, len(l.Links))
	for i, n := range l.Links {
		links[i] = reportName(n)
	}
	return json.Marshal(struct {
		File        reportName   `json:"file"`
		Status      string       `json:"status"`
		Kind        string       `json:"kind,omitempty"`
		Arch        string       `json:"arch,omitempty"`
		Bytes       int64        `json:"bytes"`
		FDEs        int          `json:"fdes"`
		Reason      string       `json:"reason,omitempty"`
		Output      reportName   `json:"output,omitempty"`
		Links       []reportName `json:"links,omitempty"`
		FileBytes   []byte       `json:"file_bytes,omitempty"`
		OutputBytes []byte       `json:"output_bytes,omitempty"`
		LinksBytes  [][]byte     `json:"links_bytes,omitempty"`
	}{reportName(l.File), l.Status, l.Kind, l.Arch, l.Bytes, l.FDEs, l.Reason, reportName(l.Output), links, l.FileBytes, l.OutputBytes, l.LinksBytes})
}

// reportName is a name in a report line: encoded as a JSON string whose
// spaces and colons are escaped (\u0020, \u003a; any JSON reader reads
// the name back), so that a line of the report is one word for a reader
// that splits at white space or colons (such as ld.so.preload's): no name
// in the tree can put a word of its choice on a line of its own.
type reportName string

func (n reportName) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(string(n))
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte(" "), []byte(`\u0020`))
	return bytes.ReplaceAll(b, []byte(":"), []byte(`\u003a`)), nil
}

// exactBytes is name's bytes when name is not UTF-8 (its _bytes field),
// else nil.
func exactBytes(name string) []byte {
	if utf8.ValidString(name) {
		return nil
	}
	return []byte(name)
}

// report collects the lines of --report, in the order of the walk.
type report struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newReport() *report {
	r := &report{}
	r.enc = json.NewEncoder(jsonWriter{&r.buf})
	r.enc.SetEscapeHTML(false)
	return r
}

func (r *report) add(f *sframegen.TreeFile, res *fileResult) {
	line := reportLine{File: f.Path, Status: res.status.String(), Kind: res.kind, Arch: res.arch,
		FDEs: res.fdes, Reason: res.reason, Output: f.Output, Links: f.Links,
		FileBytes: exactBytes(f.Path), OutputBytes: exactBytes(f.Output)}
	for _, l := range f.Links {
		if !utf8.ValidString(l) {
			line.LinksBytes = make([][]byte, len(f.Links))
			for i, l := range f.Links {
				line.LinksBytes[i] = []byte(l)
			}
			break
		}
	}
	if f.Regular() {
		line.Bytes = f.Size
	}
	r.enc.Encode(line) // a bytes.Buffer does not fail
}

// jsonWriter is the writer of a json.Encoder whose output may hold names
// from the files (file, member and symbol names): it escapes the C1
// control characters (U+0080 to U+009F) that encoding/json leaves raw as
// \u escapes, since U+009B is a CSI to some terminals and JSON may well
// be printed on one. They can only occur inside JSON strings, where the
// escape means the same; an Encoder writes each value in one Write, so no
// character is split between two.
type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte{0xc2}) { // the first byte of every C1 character
		return j.w.Write(p)
	}
	var out []byte
	for b := p; len(b) > 0; {
		r, n := utf8.DecodeRune(b)
		if r >= 0x80 && r < 0xa0 {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	if _, err := j.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
