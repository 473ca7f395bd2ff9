package main

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/sframe-gen/sframe-gen/elfpatch"
)

// openELF opens the ELF file at path for reading. It refuses anything but a
// regular file before reading from it (opening a FIFO would block, a device
// would never end), and replaces debug/elf's bare "EOF" for a file cut short
// with a message naming the part that is cut. The error leaves out the path:
// fail prints it.
func openELF(path string) (*os.File, fs.FileInfo, *elf.File, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, nil, nil, err
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		err = describeCut(f, st.Size(), err)
		f.Close()
		return nil, nil, nil, err
	}
	return f, st, ef, nil
}

// openRegular opens the regular file at path for reading, refusing
// anything else before reading from it; the error leaves out the path.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	// O_NONBLOCK: open(2) of a FIFO without a writer returns at once
	// instead of waiting; it changes nothing for a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, unwrapPath(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("not a regular file (%s)", fileKind(st.Mode()))
	}
	return f, st, nil
}

// openNamed opens the file at path, as the user named it, for patching
// (elfpatch.NamedPlace, elfpatch.OpenSource): what is written later
// replaces this very file, only while it is unchanged. Close the source
// and its Dir when done.
func openNamed(path string) (*elfpatch.Source, error) {
	at, err := elfpatch.NamedPlace(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	src, err := elfpatch.OpenSource(at)
	if err != nil {
		at.Dir.Close()
		return nil, unwrapPath(err)
	}
	return src, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return m.Type().String()
}

// cutError is a file that ends before a part its header promises.
type cutError struct {
	msg string
	err error // io.EOF or io.ErrUnexpectedEOF from debug/elf
}

func (e *cutError) Error() string { return e.msg }
func (e *cutError) Unwrap() error { return e.err }

// describeCut turns debug/elf's io.EOF or io.ErrUnexpectedEOF for the file r
// of size bytes into a cutError naming the part that runs past the end;
// other errors are returned as they are.
func describeCut(r io.ReaderAt, size int64, err error) error {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	cut := func(format string, args ...any) error {
		return &cutError{msg: fmt.Sprintf(format, args...), err: err}
	}
	if size == 0 {
		return cut("empty file, not an ELF file")
	}
	var h [64]byte
	n, _ := r.ReadAt(h[:], 0)
	if n < 4 || string(h[:4]) != elf.ELFMAG {
		return cut("not an ELF file (%d bytes)", size)
	}
	hdrSize := 64
	if n > 4 && elf.Class(h[4]) == elf.ELFCLASS32 {
		hdrSize = 52
	}
	if n < hdrSize {
		return cut("ELF header cut off: the file has %d bytes, the header %d", size, hdrSize)
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(h[5]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	var phoff, shoff uint64
	var phent, phnum, shent, shnum uint64
	if hdrSize == 64 {
		phoff, shoff = bo.Uint64(h[0x20:]), bo.Uint64(h[0x28:])
		phent, phnum = uint64(bo.Uint16(h[0x36:])), uint64(bo.Uint16(h[0x38:]))
		shent, shnum = uint64(bo.Uint16(h[0x3a:])), uint64(bo.Uint16(h[0x3c:]))
	} else {
		phoff, shoff = uint64(bo.Uint32(h[0x1c:])), uint64(bo.Uint32(h[0x20:]))
		phent, phnum = uint64(bo.Uint16(h[0x2a:])), uint64(bo.Uint16(h[0x2c:]))
		shent, shnum = uint64(bo.Uint16(h[0x2e:])), uint64(bo.Uint16(h[0x30:]))
	}
	past := func(off, n, ent uint64) bool {
		return n > 0 && (off > uint64(size) || n*ent > uint64(size)-off)
	}
	switch {
	case past(phoff, phnum, phent):
		return cut("program header table (offset %#x, %d entries of %d bytes) runs past the end of the file (%#x bytes)", phoff, phnum, phent, size)
	case past(shoff, shnum, shent):
		return cut("section header table (offset %#x, %d entries of %d bytes) runs past the end of the file (%#x bytes)", shoff, shnum, shent, size)
	}
	return cut("file cut off at %#x bytes: a section it names runs past the end", size)
}

// sectionData returns sec's contents; a section running past the end of
// the file is reported as such instead of debug/elf's bare "EOF". Errors
// name the section.
func sectionData(sec *elf.Section) ([]byte, error) {
	data, err := sec.Data()
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("section %s (file offset %#x, size %#x) runs past the end of the file (%w)", sec.Name, sec.Offset, sec.FileSize, err)
	}
	return nil, fmt.Errorf("section %s: %w", sec.Name, err)
}

// symbols returns f's symbol table (nil for none), saying when it or its
// string table runs past the end of the file.
func symbols(f *elf.File) ([]elf.Symbol, error) {
	syms, err := f.Symbols()
	switch {
	case err == nil, errors.Is(err, elf.ErrNoSymbols):
		return syms, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("the symbol table or its string table runs past the end of the file (%w)", err)
	}
	return nil, err
}
