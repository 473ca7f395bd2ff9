package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// elfInput is one ELF file a reading command (dump, verify, stats, rows)
// reads: FILE itself, or a member of the static archive FILE.
type elfInput struct {
	// name is the file's path, or ARCHIVE(MEMBER) as generate names a
	// member.
	name string
	// member is true for a member of an archive.
	member bool
	// named is true when the output names the input before its part: a
	// member, or one of several FILEs.
	named bool
	// f is the file read; nil when err says why it cannot be.
	f   *elf.File
	err error
	// r holds its size bytes.
	r    io.ReaderAt
	size int64
	// meter charges what is read of it to the command's --memory-limit
	// (its headers are charged already).
	meter *elfread.Meter
}

// readInputs calls read with the ELF file at path, or, when path is a
// static archive, with each of its members that is an ELF file, in order
// (members of other kinds are left out: generate leaves them as they
// are). read returns whether it found something to read in the input (a
// member without the section the command reads is passed over). The error
// is opening or parsing path, or, for an archive in which read found
// nothing, the message nothing. What is read is charged to budget
// (elfread.Meter), each input's headers before they are read; read
// charges what it reads of in (in.meter), given back when it returns.
func readInputs(path string, nothing string, budget *memoryBudget, read func(in elfInput) bool) error {
	// Not elf.Open: a FIFO would block, a cut header say "EOF".
	file, st, err := elfread.OpenRegular(path)
	if err != nil {
		return err
	}
	defer file.Close()
	archive := false
	meter := elfread.NewMeter(budget)
	defer meter.Release()
	found, err := meter.Objects(file, st.Size(), func(o elfread.Object) bool {
		if o.Member == "" {
			return read(elfInput{name: path, f: o.File, r: o.R, size: o.Size, meter: meter})
		}
		archive = true
		return read(elfInput{name: fmt.Sprintf("%s(%s)", path, o.Member), member: true, f: o.File, err: o.Err, r: o.R, size: o.Size, meter: meter})
	})
	if err == nil && archive && !found {
		return errors.New(nothing)
	}
	return err
}
