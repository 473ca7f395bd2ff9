package sframegen

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// Generate makes the SFrame section of the ELF file r (of size bytes), as
// WriteFile would write it: for a linked file, at the address the patch
// would put it.
func Generate(r io.ReaderAt, size int64, opt Options) (*Section, error) {
	g, err := NewGenerator(opt, Resources{})
	if err != nil {
		return nil, err
	}
	return g.Generate(r, size)
}

// GenerateFile is Generate on the file at path (a symbolic link followed;
// anything but a regular file refused). Errors name path.
func GenerateFile(path string, opt Options) (*Section, error) {
	g, err := NewGenerator(opt, Resources{})
	if err != nil {
		return nil, err
	}
	sec, err := g.generateFile(path)
	if err != nil {
		return sec, fmt.Errorf("%s: %w", path, err)
	}
	return sec, nil
}

// WriteFile writes the file at in, with its SFrame section, to out (which
// may be in): .sframe and .rela.sframe in a relocatable object, a loaded
// .sframe with PT_GNU_SFRAME in a linked file, every object of a static
// archive. The file is replaced atomically, as [Generator.Process]
// replaces it: on any error out is as before and no temporary file is
// left. The Outcome's Reports hold the section of the file, or of each
// object of an archive. A file without CFI is ErrNoCFI. Errors name in.
func WriteFile(in, out string, opt Options) (Outcome, error) {
	g, err := NewGenerator(opt, Resources{})
	if err != nil {
		return Outcome{}, err
	}
	job := Job{}
	if job.In, err = replace.NamedPlace(in); err != nil {
		return Outcome{}, err
	}
	defer job.In.Dir.Close()
	if out != in {
		if job.Out, err = replace.OutputPlace(out); err != nil {
			return Outcome{}, err
		}
		defer job.Out.Dir.Close()
	}
	res, err := g.Process(job)
	if err != nil {
		return res, fmt.Errorf("%s: %w", in, err)
	}
	if res.Status == NoCFI {
		return res, fmt.Errorf("%s: %w", in, ErrNoCFI)
	}
	return res, nil
}

// Generate makes the SFrame section of the ELF file r (of size bytes), as
// Process would write it: for a linked file, at the address the patch
// would put it.
func (g *Generator) Generate(r io.ReaderAt, size int64) (*Section, error) {
	return g.generate(r, size, nil)
}

// GenerateAt is Generate with a linked file's section encoded for the
// address addr instead (the function start fields are PC-relative).
// With a *StrictError or ErrNoFunctions, Generate and GenerateAt return
// the section too (not encoded), for its report.
func (g *Generator) GenerateAt(r io.ReaderAt, size int64, addr uint64) (*Section, error) {
	return g.generate(r, size, &addr)
}

// generateFile is Generate on the file at path, opened as Process opens
// a file the user names: a symbolic link followed, anything but a regular
// file refused before it is read. Errors do not name the file.
func (g *Generator) generateFile(path string) (*Section, error) {
	src, err := replace.OpenNamed(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return g.generate(src.File, src.Size(), nil)
}

// generate is Generate (addr nil) and GenerateAt. A panic (a bug) is
// returned as an *InternalError, as Process returns it.
func (g *Generator) generate(r io.ReaderAt, size int64, addr *uint64) (sec *Section, err error) {
	defer g.begin()()
	defer func() {
		if p := recover(); p != nil {
			sec, err = nil, &InternalError{Panic: p, Stack: debug.Stack()}
		}
	}()
	st := g.startStaging()
	defer st.done()
	in, err := g.openInput(r, size, st.charge)
	if err != nil {
		return nil, err
	}
	cost := linkedCost(in.ef, g.opt.Source)
	if in.target.Relocatable {
		if cost, err = objectCost(in.ef, size, g.opt.Source); err != nil {
			return nil, err
		}
	}
	if err := st.names(in.ef, size); err != nil {
		return nil, err
	}
	if err := st.admit(cost); err != nil {
		return nil, err
	}
	sec, err = g.section(in, nil)
	if err != nil {
		if sec != nil && sec.result != nil {
			return sec, err // a *StrictError or ErrNoFunctions: its report
		}
		return nil, err
	}
	if in.target.Relocatable {
		data, err := sec.result.Section.Encode()
		if err != nil {
			return nil, fmt.Errorf("encoding .sframe: %w", err)
		}
		sec.parts = [][]byte{data}
		return sec, nil
	}
	if addr == nil {
		n, err := sec.encodedSize()
		if err != nil {
			return nil, err
		}
		layout, err := elfpatch.PlaceLinked(r, size, n)
		if err != nil {
			return nil, err
		}
		addr = &layout.Addr
	}
	if _, err := sec.encodeAt(*addr); err != nil {
		return nil, err
	}
	return sec, nil
}

// encodedSize is the size of the section once encoded.
func (s *Section) encodedSize() (int, error) {
	n, err := s.result.Section.Size()
	if err != nil {
		return 0, fmt.Errorf("encoding .sframe: %w", err)
	}
	return n, nil
}

// encodeAt encodes a linked file's section placed at addr (the FDE index
// sorted by start, the start fields set: lower.Result.EncodeThenPlace),
// the lowered section put in the same order when Result is called, so
// that read in memory (emit.Dump, emit.ReaderFor) it answers as the bytes
// decoded do.
func (s *Section) encodeAt(addr uint64) ([][]byte, error) {
	parts, place, err := s.result.EncodeThenPlace(addr)
	if err != nil {
		return nil, fmt.Errorf("encoding .sframe: %w", err)
	}
	s.Addr, s.parts, s.place = addr, parts, place
	return parts, nil
}
