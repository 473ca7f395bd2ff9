package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/emit"
)

// shtGNUSFrame is SHT_GNU_SFRAME, the section type of .sframe since
// binutils 2.45.
const shtGNUSFrame elf.SectionType = 0x6ffffff4

// errNoSFrame is returned for a file without a .sframe section.
var errNoSFrame = errors.New("no .sframe section")

// runDump implements "sframe-gen dump [--json] FILE": the .sframe section
// printed as objdump --sframe prints it (from "Contents of the SFrame
// section" on), or as JSON.
func (c *cli) runDump(args []string) int {
	fs := pflag.NewFlagSet("dump", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print JSON instead of objdump's text")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return c.fail("", usageError{"dump: " + err.Error()})
	}
	if *help {
		fmt.Fprintf(c.stdout, "Usage: sframe-gen dump [--json] FILE\n\nPrint the .sframe section of FILE as objdump --sframe does.\n\n%s", fs.FlagUsages())
		return exitOK
	}
	if fs.NArg() != 1 {
		return c.fail("", usageError{"dump: expected exactly one FILE"})
	}
	file := fs.Arg(0)
	if err := dumpFile(c.stdout, file, *asJSON); err != nil {
		return c.fail(file, err)
	}
	return exitOK
}

// dumpFile prints the .sframe section of the ELF file at path.
func dumpFile(w io.Writer, path string, asJSON bool) error {
	in, _, f, err := openELF(path) // not elf.Open: a FIFO would block, a cut header say "EOF"
	if err != nil {
		return err
	}
	defer in.Close()
	sec, data, err := readSFrame(f)
	if err != nil {
		return err
	}
	s, err := emit.Decode(data)
	if err != nil {
		return fmt.Errorf("section %s: %w", sec.Name, err)
	}
	addr := sec.Addr
	if f.Type == elf.ET_REL {
		addr = 0
	}
	if asJSON {
		return emit.DumpJSON(w, s, addr, sec.Name)
	}
	return emit.Dump(w, s, addr, sec.Name)
}

// readSFrame finds the .sframe section (SHT_GNU_SFRAME, or SHT_PROGBITS as
// written by binutils 2.44 and older) and returns its contents, with its
// RELA relocations applied in a relocatable object, as objdump does.
func readSFrame(f *elf.File) (*elf.Section, []byte, error) {
	var sec *elf.Section
	idx := 0
	for i, s := range f.Sections {
		if s.Name == ".sframe" && (s.Type == shtGNUSFrame || s.Type == elf.SHT_PROGBITS) {
			sec, idx = s, i
			break
		}
	}
	if sec == nil {
		for _, s := range f.Sections {
			if s.Name == ".sframe" {
				return nil, nil, fmt.Errorf("section .sframe of type %v does not contain SFrame data", s.Type)
			}
		}
		return nil, nil, errNoSFrame
	}
	data, err := sectionData(sec)
	if err != nil {
		return nil, nil, err
	}
	if f.Type != elf.ET_REL {
		return sec, data, nil
	}
	for _, rs := range f.Sections {
		if rs.Type == elf.SHT_RELA && int(rs.Info) == idx {
			if err := applyRela(f, rs, data); err != nil {
				return nil, nil, fmt.Errorf("section %s: %w", rs.Name, err)
			}
		}
	}
	return sec, data, nil
}

// applyRela applies the 64-bit PC-relative relocations gas emits for the
// FDE start fields (R_X86_64_PC64, R_AARCH64_PREL64, R_390_PC64; in
// version 2 the 32-bit R_X86_64_PC32, R_AARCH64_PREL32, R_390_PC32) to data:
// value S+A-P, every section at address 0 as in a relocatable object.
func applyRela(f *elf.File, rs *elf.Section, data []byte) error {
	if f.Class != elf.ELFCLASS64 {
		return fmt.Errorf("relocations of a %v file are not supported", f.Class)
	}
	var pc64, pc32 uint32
	switch f.Machine {
	case elf.EM_X86_64:
		pc64, pc32 = uint32(elf.R_X86_64_PC64), uint32(elf.R_X86_64_PC32)
	case elf.EM_AARCH64:
		pc64, pc32 = uint32(elf.R_AARCH64_PREL64), uint32(elf.R_AARCH64_PREL32)
	case elf.EM_S390:
		pc64, pc32 = uint32(elf.R_390_PC64), uint32(elf.R_390_PC32)
	default:
		return fmt.Errorf("relocations for machine %v are not supported", f.Machine)
	}
	rel, err := rs.Data()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("file offset %#x, size %#x: runs past the end of the file (%w)", rs.Offset, rs.FileSize, err)
	}
	if err != nil {
		return err
	}
	if len(rel)%24 != 0 {
		return fmt.Errorf("size %#x is not a multiple of 24", len(rel))
	}
	syms, err := symbols(f)
	if err != nil {
		return err
	}
	bo := f.ByteOrder
	for p := 0; p < len(rel); p += 24 {
		off := bo.Uint64(rel[p:])
		info := bo.Uint64(rel[p+8:])
		addend := int64(bo.Uint64(rel[p+16:]))
		typ, symIdx := uint32(info), info>>32
		if typ == 0 { // R_*_NONE
			continue
		}
		size := uint64(8)
		switch typ {
		case pc64:
		case pc32:
			size = 4 // version 2's start fields (gas 2.41-2.45)
		default:
			return fmt.Errorf("offset %#x: unsupported relocation type %d", p, typ)
		}
		var s uint64
		if symIdx != 0 {
			if symIdx > uint64(len(syms)) {
				return fmt.Errorf("offset %#x: symbol index %d out of range (%d symbols)", p, symIdx, len(syms))
			}
			s = syms[symIdx-1].Value
		}
		if off > uint64(len(data)) || uint64(len(data))-off < size {
			return fmt.Errorf("offset %#x: relocation at %#x outside the section (%#x bytes)", p, off, len(data))
		}
		if size == 4 {
			bo.PutUint32(data[off:], uint32(s+uint64(addend)-off))
		} else {
			bo.PutUint64(data[off:], s+uint64(addend)-off)
		}
	}
	return nil
}
