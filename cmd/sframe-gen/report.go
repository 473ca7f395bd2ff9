package main

import (
	"bytes"
	"encoding/json"
	"os"
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
	r.enc.Encode(line) // a bytes.Buffer does not fail
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
