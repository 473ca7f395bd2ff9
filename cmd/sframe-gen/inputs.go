package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"

	"github.com/sframe-gen/sframe-gen/elfpatch"
)

// elfInput is one ELF file a reading command (dump, verify, stats, rows)
// reads: FILE itself, or a member of the static archive FILE.
type elfInput struct {
	// name is the file's path, or ARCHIVE(MEMBER) as generate names a
	// member.
	name string
	// member is true for a member of an archive.
	member bool
	// f is the file read; nil when err says why it cannot be.
	f   *elf.File
	err error
}

// readInputs calls read with the ELF file at path, or, when path is a
// static archive, with each of its members that is an ELF file, in order
// (members of other kinds are left out: generate leaves them as they
// are). read returns whether it found something to read in the input (a
// member without the section the command reads is passed over). The error
// is opening or parsing path, or, for an archive in which read found
// nothing, the message nothing.
func readInputs(path string, nothing string, read func(in elfInput) bool) error {
	// Not elf.Open: a FIFO would block, a cut header say "EOF".
	file, st, err := openRegular(path)
	if err != nil {
		return err
	}
	defer file.Close()
	if !isArchive(file) {
		f, err := elf.NewFile(file)
		if err != nil {
			return describeCut(file, st.Size(), err)
		}
		read(elfInput{name: path, f: f})
		return nil
	}
	data, err := readAll(file, st.Size())
	if err != nil {
		return err
	}
	members, err := elfpatch.ArchiveMembers(data)
	if err != nil {
		return err
	}
	found := false
	for _, m := range members {
		if len(m.Data) < 4 || string(m.Data[:4]) != elf.ELFMAG {
			continue
		}
		in := elfInput{name: fmt.Sprintf("%s(%s)", path, m.Name), member: true}
		in.f, in.err = elf.NewFile(bytes.NewReader(m.Data))
		if in.err != nil {
			in.f, in.err = nil, describeCut(bytes.NewReader(m.Data), int64(len(m.Data)), in.err)
		}
		if read(in) {
			found = true
		}
	}
	if !found {
		return errors.New(nothing)
	}
	return nil
}
