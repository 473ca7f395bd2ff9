package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
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
	r.enc = json.NewEncoder(&r.buf)
	r.enc.SetEscapeHTML(false)
	return r
}

func (r *report) add(j *job, res *fileResult) {
	line := reportLine{File: j.path, Status: res.status.String(), Kind: res.kind, Arch: res.arch,
		FDEs: res.fdes, Reason: res.reason, Output: j.out, Links: j.links}
	if j.kind == kindFile {
		line.Bytes = j.size
	}
	start := r.buf.Len()
	r.enc.Encode(line) // a bytes.Buffer does not fail
	escapeC1(&r.buf, start)
}

// escapeC1 rewrites the C1 control characters (U+0080 to U+009F) that
// encoding/json leaves raw in buf from start on as \u escapes: U+009B is
// a CSI to some terminals, and a report may well be printed on one. They
// can only occur inside JSON strings, where the escape means the same.
func escapeC1(buf *bytes.Buffer, start int) {
	b := buf.Bytes()[start:]
	if !bytes.Contains(b, []byte{0xc2}) {
		return
	}
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r >= 0x80 && r < 0xa0 {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	buf.Truncate(start)
	buf.Write(out)
}

// write writes the report to path ("-": standard output) atomically.
func (r *report) write(c *cli, path string) error {
	if path == "-" {
		_, err := c.stdout.Write(r.buf.Bytes())
		return err
	}
	return c.temps.ReplaceFile(path, 0o644, func(tmp *os.File) error {
		_, err := tmp.Write(r.buf.Bytes())
		return err
	})
}
