package cfi

import (
	"debug/elf"
	"errors"
)

// Read reads the CIEs and FDEs of f's .eh_frame or .debug_frame section,
// as src selects. Problems with single entries are collected in
// Frames.Errors and do not stop the read; the error result is only for a
// file where nothing can be read (no such section, unreadable data).
func Read(f *elf.File, src Source) (*Frames, error) {
	return nil, errors.New("not implemented yet")
}
