package sframegen

import (
	"io"
	"os"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// The files a Generator reads and writes are named by where they are: a
// directory held open and a name in it (elfpatch's Place), never by a
// path resolved again, so that no symbolic link planted meanwhile is
// followed (docs/robustness.md). These are elfpatch's types, for callers
// that walk trees.
type (
	// Dir is a directory held open.
	Dir = replace.Dir
	// Place is a directory held open and one name in it.
	Place = replace.Place
	// Entry is what fstatat says of a name in a directory.
	Entry = replace.Entry
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
	NotRegularError = replace.ErrNotRegular
)

// ErrChanged is the error for a file that changed (or was replaced)
// while it was read: it is left as it is.
var ErrChanged = replace.ErrChanged

// ArchiveMagic starts a static archive.
const ArchiveMagic = elfpatch.ArchiveMagic

// OpenDir opens the directory path, following symbolic links as named.
func OpenDir(path string) (*Dir, error) { return replace.OpenDir(path) }

// NamedPlace is the place of the file path names, as the user named it (a
// final symbolic link followed by the kernel, under its protections, to its
// file). Close the place's Dir when done.
func NamedPlace(path string) (Place, error) { return replace.NamedPlace(path) }

// Link makes to another name of the file at from.
func Link(from, to Place) error { return replace.Link(from, to) }

// OpenRead opens the regular file at p for reading, as Process opens the
// file it reads: a symbolic link at p is not followed, a FIFO is not
// waited for, anything but a regular file is a *NotRegularError. size is
// the file's size when it was opened.
func OpenRead(p Place) (f *os.File, size int64, err error) {
	src, err := replace.OpenSource(p)
	if err != nil {
		return nil, 0, err
	}
	return src.File, src.Size(), nil
}

// OutputPlace is NamedPlace for a file to write: an existing file there is
// also opened as a creating open(2) would, for the kernel's
// fs.protected_regular and fs.protected_fifos checks.
func OutputPlace(path string) (Place, error) { return replace.OutputPlace(path) }

// OpenSink opens the FIFO, null device or terminal at p that is written as
// it is; nil for a regular file or nothing (replaced or created).
func OpenSink(p Place) (io.WriteCloser, error) { return replace.OpenSink(p) }

// TempOf reports whether name is a temporary name sframe-gen gives a new
// file next to the NAME it replaces (.NAME.sframe-gen-XXXXXXXX), and NAME.
func TempOf(name string) (string, bool) { return replace.TempOf(name) }

// ResumeTemp finishes or undoes the replacement a killed run left at the
// temporary name at (docs/robustness.md, "What a kill can leave"); it
// reports whether there was one (else the file is left alone).
func ResumeTemp(at Place) (bool, error) {
	r, err := replace.ResumeTemp(at.Dir, at.Name)
	return r != replace.NotJournaled, err
}

// MkdirNamed makes the directory path, mode 0700 until it is given its
// mode (Dir.Chmod), and opens it; made is false for a directory that was
// there (its mode is left alone).
func MkdirNamed(path string) (dir *Dir, made bool, err error) { return replace.MkdirNamed(path) }
