package main

// reportLine is one line of --report as the tests read it
// (sframegen.TreeFile.AppendReport writes it).
type reportLine struct {
	File        string   `json:"file"`
	Status      string   `json:"status"`
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
