//go:build !linux

package sframegen

import "io"

// mapFile returns nil: files are mapped on Linux only, elsewhere the
// caller reads.
func mapFile(r io.ReaderAt, size int64) (data []byte, unmap func()) { return nil, nil }
