package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// reportLine is one object of --report: what the batch did with one file.
type reportLine struct {
	File   string   `json:"file"`
	Status string   `json:"status"` // patched, up-to-date, no-cfi, skipped, failed
	Kind   string   `json:"kind,omitempty"`
	Arch   string   `json:"arch,omitempty"`
	Bytes  int64    `json:"bytes"`
	FDEs   int      `json:"fdes"`
	Reason string   `json:"reason,omitempty"`
	Output string   `json:"output,omitempty"`
	Links  []string `json:"links,omitempty"`
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

func (r *report) add(j *job, res *fileResult) {
	line := reportLine{File: j.path, Status: res.status.String(), Kind: res.kind, Arch: res.arch,
		FDEs: res.fdes, Reason: res.reason, Output: j.out, Links: j.links}
	if j.kind == kindFile {
		line.Bytes = j.size
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
