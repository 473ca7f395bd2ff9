package sframegen

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// reportLine is one line of a tree's report (TreeFile.AppendReport). A
// name that is not UTF-8 (JSON strings are) is in its field with each
// byte that is not part of a UTF-8 character as U+FFFD, and exact, byte
// for byte, in the field of the same name with _bytes (base64).
type reportLine struct {
	File   reportName `json:"file"`
	Status string     `json:"status"` // patched, up-to-date, no-cfi, skipped, failed
	// The file, as Outcome says it.
	Kind   string `json:"kind,omitempty"`
	Arch   string `json:"arch,omitempty"`
	Bytes  int64  `json:"bytes"`
	FDEs   int    `json:"fdes"`
	Reason string `json:"reason,omitempty"`
	// Its other names: where it was written (under an output
	// directory), its hard links.
	Output reportName   `json:"output,omitempty"`
	Links  []reportName `json:"links,omitempty"`
	// The names that are not UTF-8, byte for byte.
	FileBytes   []byte   `json:"file_bytes,omitempty"`
	OutputBytes []byte   `json:"output_bytes,omitempty"`
	LinksBytes  [][]byte `json:"links_bytes,omitempty"`
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

// AppendReport appends to b the line of a tree's report (JSON, as the
// sframe-gen command's --report writes it) that says what was done with
// f: out's Status, Kind, Arch, FDEs and Reason, f's names and size. A
// name is escaped so that the line is one word for a reader that splits
// at white space or colons, and given byte for byte (base64, in the field
// of its name with _bytes) when it is not UTF-8; C1 control characters
// are escaped (elfread.JSONWriter).
func (f *TreeFile) AppendReport(b []byte, out *Outcome) []byte {
	line := reportLine{File: reportName(f.Path), Status: out.Status.String(), Kind: out.Kind, Arch: out.Arch,
		FDEs: out.FDEs, Reason: out.Reason, Output: reportName(f.Output),
		FileBytes: exactBytes(f.Path), OutputBytes: exactBytes(f.Output)}
	for _, l := range f.Links {
		line.Links = append(line.Links, reportName(l))
		if !utf8.ValidString(l) && line.LinksBytes == nil {
			line.LinksBytes = make([][]byte, len(f.Links))
			for i, l := range f.Links {
				line.LinksBytes[i] = []byte(l)
			}
		}
	}
	if f.Regular() {
		line.Bytes = f.Size
	}
	buf := bytes.NewBuffer(b)
	json.NewEncoder(elfread.JSONWriter{W: buf}).Encode(line) // a bytes.Buffer does not fail, nor does a line
	return buf.Bytes()
}
