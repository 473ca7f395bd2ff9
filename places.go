package sframegen

import (
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// The files a Generator reads and writes are named by where they are: a
// directory held open and a name in it (package replace's Place, made
// with replace.NamedPlace or replace.Dir.Place), never by a path resolved
// again, so that no symbolic link planted meanwhile is followed
// (docs/robustness.md). These are the types of Job and Resources.
type (
	// Dir is a directory held open.
	Dir = replace.Dir
	// Place is a directory held open and one name in it.
	Place = replace.Place
	// TempFiles records the temporary files being written, for a signal
	// handler to remove (RemoveAll).
	TempFiles = replace.TempFiles
	// ReplaceOptions say what replacing a file does beyond the
	// replacement: its other links, its times, syncing.
	ReplaceOptions = replace.ReplaceOptions
	// Reloc is one .rela.sframe entry of a relocatable object.
	Reloc = elfpatch.Reloc
	// Layout is where a linked file's section went and what the patch
	// changed besides.
	Layout = elfpatch.Layout
	// NotRegularError is the error for a name that holds something else
	// than a regular file.
	NotRegularError = replace.NotRegularError
)

// ErrChanged is the error for a file that changed (or was replaced)
// while it was read: it is left as it is.
var ErrChanged = replace.ErrChanged

// ArchiveMagic starts a static archive.
const ArchiveMagic = elfpatch.ArchiveMagic
