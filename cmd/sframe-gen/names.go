package main

import (
	"io"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// displayName returns a name as messages print it (elfread.DisplayName).
func displayName(s string) string { return elfread.DisplayName(s) }

// jsonWriter escapes the C1 control characters of the JSON written to w
// (elfread.JSONWriter).
type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) { return elfread.JSONWriter{W: j.w}.Write(p) }
