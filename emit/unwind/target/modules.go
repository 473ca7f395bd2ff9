package target

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit"
)

// Module is one ELF file mapped into a process: where, its SFrame section
// (or why it has none), its function symbols.
type Module struct {
	Name       string // as the process maps it
	Path       string // the file read (under Options.Sysroot when there)
	Start, End uint64 // where it is mapped (both 0: not found, extent unknown)
	Bias       uint64 // what was added to its addresses when it was loaded
	SFrame     *emit.Reader
	NoSFrame   error    // why SFrame is nil
	Symbols    *Symbols // nil when its file could not be read
	// buildID is the file's GNU build ID note as its bytes lie in the
	// file (header, name, ID), nil without one, and buildIDAddr its
	// link-time address: checkBuildID looks for it in the process's
	// memory.
	buildID     []byte
	buildIDAddr uint64
}

// String is m's name ("" for nil: no module).
func (m *Module) String() string {
	if m == nil {
		return ""
	}
	return m.Name
}

// resolve returns the file to read for a path of the process: under
// sysroot when it has it, else the path itself.
func resolve(sysroot, name string) string {
	if sysroot != "" {
		p := filepath.Join(sysroot, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return name
}

// fromDir returns a relative name as a path in dir when dir holds it;
// other names as they are.
func fromDir(dir, name string) string {
	if filepath.IsAbs(name) || dir == "" {
		return name
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		return name
	}
	return p
}

// openModule reads the module name of the process at bias (the ELF file
// at its path or under sysroot); nil for a file that is not ELF.
func openModule(sysroot, name string, bias uint64, meter Meter) (*Module, error) {
	return openModuleAt(name, resolve(sysroot, name), bias, meter)
}

// openModuleAt is openModule of the file at path: its headers, .sframe
// and symbols charged to meter before they are read.
func openModuleAt(name, path string, bias uint64, meter Meter) (*Module, error) {
	f, file, size, err := openELF(path, meter)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if err := meter.ChargeSFrame(f, size); err != nil {
		return nil, err
	}
	if err := meter.ChargeNames(f, size); err != nil {
		return nil, err
	}
	m := &Module{Name: name, Path: path, Bias: bias, Start: ^uint64(0)}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			m.Start = min(m.Start, p.Vaddr+bias)
			m.End = max(m.End, p.Vaddr+p.Memsz+bias)
		}
	}
	if m.End <= m.Start {
		return nil, errors.New("no PT_LOAD segment")
	}
	m.SFrame, m.NoSFrame = emit.ReaderFromELF(f)
	m.Symbols = NewSymbols(f)
	m.buildID, m.buildIDAddr = buildIDNote(f)
	return m, nil
}

// gnuBuildID is the type of the GNU build ID note (NT_GNU_BUILD_ID).
const gnuBuildID = 3

// buildIDNote returns the bytes of f's GNU build ID note (header, name
// and ID) and its link-time address, or nil.
func buildIDNote(f *elf.File) ([]byte, uint64) {
	s := f.Section(".note.gnu.build-id")
	if s == nil || s.Type != elf.SHT_NOTE {
		return nil, 0
	}
	b, err := s.Data()
	if err != nil {
		return nil, 0
	}
	if id := gnuBuildIDAt(b, f.ByteOrder); id != nil {
		return b[:16+len(id)], s.Addr
	}
	return nil, 0
}

// gnuBuildIDAt returns the ID of the GNU build ID note at the start of b,
// or nil.
func gnuBuildIDAt(b []byte, order binary.ByteOrder) []byte {
	if len(b) < 16 || order.Uint32(b) != 4 || order.Uint32(b[8:]) != gnuBuildID || string(b[12:16]) != "GNU\x00" {
		return nil
	}
	n := order.Uint32(b[4:])
	if n == 0 || n > 64 || uint64(n) > uint64(len(b)-16) {
		return nil
	}
	return b[16 : 16+n]
}

// checkBuildID makes m a module without SFrame when the process's memory
// holds another GNU build ID than m's file: the file read is not the one
// the process ran (another build at the path, or under --sysroot), and
// its SFrame would describe other code. It looks where the file's note
// is mapped (a running process has every page; a core, by default, only
// the first page of each ELF file) and anywhere in the first page (where
// the note of the file the process ran lies, unless sframe-gen moved it
// when it patched the file; a core of the file before it was patched
// still matches the patched file, whose code is the same). Where the
// memory holds neither the note nor another ID, nothing is said.
func checkBuildID(m *Module, mem io.ReaderAt, order binary.ByteOrder) {
	if m.SFrame == nil || m.buildID == nil {
		return
	}
	var other []byte
	page := make([]byte, 4096)
	if n, _ := mem.ReadAt(page, int64(m.Start&^0xfff)); n == len(page) && bytes.HasPrefix(page, []byte(elf.ELFMAG)) {
		if bytes.Contains(page, m.buildID) {
			return
		}
		for i := 0; i+16 <= len(page) && other == nil; i += 4 {
			other = gnuBuildIDAt(page[i:], order)
		}
	}
	at := make([]byte, len(m.buildID))
	if n, _ := mem.ReadAt(at, int64(m.buildIDAddr+m.Bias)); n == len(at) {
		if bytes.Equal(at, m.buildID) {
			return
		}
		if id := gnuBuildIDAt(at, order); id != nil {
			other = id
		}
	}
	if other != nil {
		m.NoSFrame = fmt.Errorf("not the file the process ran: build ID %x in the process's memory, %x in %s", other, m.buildID[16:], m.Path)
		m.SFrame = nil
	}
}

// modulesFromMappings makes a module of each ELF file of ms (NT_FILE,
// /proc/PID/maps): its bias from the mapping of its lowest offset. A file
// that cannot be read is still a module, without SFrame, the error saying
// why (a walk that reaches it says so: a missing --sysroot, a file
// deleted or replaced since the process mapped it).
func modulesFromMappings(ms []mapping, sysroot string, meter Meter) []*Module {
	first := map[string]mapping{}
	span := map[string][2]uint64{}
	var order []string
	for _, m := range ms {
		if m.Path == "" || m.Path[0] == '[' {
			continue
		}
		f, seen := first[m.Path]
		if !seen {
			order = append(order, m.Path)
			span[m.Path] = [2]uint64{m.Start, m.End}
		}
		sp := span[m.Path]
		span[m.Path] = [2]uint64{min(sp[0], m.Start), max(sp[1], m.End)}
		if !seen || m.Offset < f.Offset || m.Offset == f.Offset && m.Start < f.Start {
			first[m.Path] = m
		}
	}
	var mods []*Module
	for _, name := range order {
		m := first[name]
		path, err := mappedFile(sysroot, m)
		var bias uint64
		if err == nil {
			bias, err = mappingBias(path, m, meter)
		}
		var mod *Module
		if err == nil {
			mod, err = openModuleAt(name, path, bias, meter)
		}
		if errors.Is(err, ErrNotELF) {
			continue // a data file mapped (a locale archive)
		}
		if err != nil {
			sp := span[name]
			mod = &Module{Name: name, Path: path, Start: sp[0], End: sp[1], NoSFrame: notOnHost(err, sysroot)}
		}
		mods = append(mods, mod)
	}
	return mods
}

// notOnHost adds to the error of a file that does not exist what to do
// about it: --sysroot.
func notOnHost(err error, sysroot string) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if sysroot != "" {
		return fmt.Errorf("%w (not under --sysroot %s either)", err, sysroot)
	}
	return fmt.Errorf("%w: not on this host: %s", err, sysrootHint)
}

// deletedSuffix ends the path of a mapped file that was deleted, or
// replaced by another file (renamed over it), after it was mapped
// (/proc/PID/maps, NT_FILE).
const deletedSuffix = " (deleted)"

// mappedFile returns the file to read for mapping m: under sysroot when it
// has it; else the very file mapped where the process can be asked for it
// (m.File); else m.Path, unless the process's file was deleted or replaced
// since it was mapped: then no file holds what it runs.
func mappedFile(sysroot string, m mapping) (string, error) {
	path := resolve(sysroot, m.Path)
	if path != m.Path {
		return path, nil
	}
	if m.File != "" {
		// A live process: its very file, or nothing. The path is
		// never read instead (the range may have been unmapped, and
		// its path given to another file meanwhile).
		f, _, err := elfread.OpenRegular(m.File)
		if err == nil {
			f.Close()
			return m.File, nil
		}
		if strings.HasSuffix(m.Path, deletedSuffix) {
			return m.Path, fmt.Errorf("%s was deleted or replaced after the process mapped it, and the file it maps cannot be read through %s: %w", strings.TrimSuffix(m.Path, deletedSuffix), m.File, err)
		}
		return m.Path, fmt.Errorf("the file mapped at %#x cannot be read through %s (unmapped meanwhile?); its path is not read instead: %w", m.Start, m.File, err)
	}
	if strings.HasSuffix(m.Path, deletedSuffix) {
		return m.Path, fmt.Errorf("%s was deleted or replaced after the process mapped it: the file the process ran is gone", strings.TrimSuffix(m.Path, deletedSuffix))
	}
	return m.Path, nil
}

// mappingBias returns the load bias of the ELF file at path given one of
// its mappings: the PT_LOAD holding the mapping's file offset says which
// address that offset was linked at.
func mappingBias(path string, m mapping, meter Meter) (uint64, error) {
	defer meter.ReleaseTo(meter.Held())
	f, file, _, err := openELF(path, meter)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		pageOff := p.Off &^ 0xfff
		if m.Offset >= pageOff && m.Offset < p.Off+max(p.Filesz, 1) {
			return m.Start - p.Vaddr - m.Offset + p.Off, nil
		}
	}
	return 0, fmt.Errorf("mapped at file offset %#x, which no PT_LOAD segment holds (not the file the process mapped?)", m.Offset)
}

// Auxiliary vector entries and dynamic tags the link-map search reads.
const (
	atPHDR    = 3
	atBASE    = 7
	atEXECFN  = 31
	atSysinfo = 33
	dtDEBUG   = 21
)

// modulesFromLinkMap finds the modules of a process whose core has no
// NT_FILE (qemu-user's): the program from the auxiliary vector
// (AT_EXECFN, AT_PHDR), the libraries from the dynamic linker's r_debug
// list in memory (DT_DEBUG), as gdb does. A relative path (a program
// started as ../prog) is looked up in coreDir first: the core is written
// in the process's working directory, which the core does not record.
func modulesFromLinkMap(p *core, mem io.ReaderAt, sysroot, coreDir string, meter Meter) ([]*Module, error) {
	rd := memReader{mem: mem, order: p.abi.ByteOrder()}
	execfn, ok := p.auxv[atEXECFN]
	if !ok {
		return nil, errors.New("core has neither NT_FILE nor AT_EXECFN: cannot find the program")
	}
	name, err := rd.cstring(execfn)
	if err != nil {
		return nil, fmt.Errorf("AT_EXECFN: %w", err)
	}
	recorded := name
	name = fromDir(coreDir, name)
	path := resolve(sysroot, name)
	bias, dyn, err := programBias(path, p.auxv[atPHDR])
	if errors.Is(err, fs.ErrNotExist) && !filepath.IsAbs(recorded) {
		return nil, fmt.Errorf("program %s: a path relative to the process's working directory, which the core does not record; not found from the core's directory (%s) nor the current one: walk the core from that directory", recorded, coreDir)
	}
	if err != nil {
		return nil, fmt.Errorf("program %s: %w", path, err)
	}
	prog, err := openModule(sysroot, name, bias, meter)
	if err != nil {
		return nil, fmt.Errorf("program %s: %w", path, err)
	}
	mods := []*Module{prog}
	if dyn == 0 {
		return mods, nil // static
	}
	// The dynamic linker at AT_BASE, from the program's PT_INTERP: a
	// process stopped before the linker has listed itself in r_debug
	// has it mapped already (the list's entry for it is then dropped
	// as the same module).
	if base := p.auxv[atBASE]; base != 0 {
		if interp, err := interpreter(path, meter); err == nil {
			if m, err := openModule(sysroot, interp, base, meter); err == nil {
				mods = append(mods, m)
			} else if errors.Is(err, fs.ErrNotExist) {
				mods = append(mods, &Module{Name: interp, Path: resolve(sysroot, interp), NoSFrame: notOnHost(err, sysroot)})
			}
		}
	}
	rdebug := uint64(0)
	for a := dyn + bias; ; a += 16 {
		tag, ok1 := rd.word(a)
		val, ok2 := rd.word(a + 8)
		if !ok1 || !ok2 || tag == 0 {
			break
		}
		if tag == dtDEBUG {
			rdebug = val
		}
	}
	if rdebug == 0 {
		return mods, nil
	}
	lm, _ := rd.word(rdebug + 8) // r_map
	for n := 0; lm != 0 && n < 4096; n++ {
		addr, _ := rd.word(lm)
		namep, _ := rd.word(lm + 8)
		next, _ := rd.word(lm + 24)
		if lib, err := rd.cstring(namep); err == nil && lib != "" {
			m, err := openModule(sysroot, fromDir(coreDir, lib), addr, meter)
			switch {
			case err == nil:
				mods = append(mods, m)
			case errors.Is(err, fs.ErrNotExist):
				// Listed without its extent, which only the file
				// gives: the walk names it when it ends outside
				// every module.
				mods = append(mods, &Module{Name: lib, Path: resolve(sysroot, lib), NoSFrame: notOnHost(err, sysroot)})
			}
		}
		lm = next
	}
	return mods, nil
}

// interpreter returns the PT_INTERP path of the program at path.
func interpreter(path string, meter Meter) (string, error) {
	defer meter.ReleaseTo(meter.Held())
	f, file, _, err := openELF(path, meter)
	if err != nil {
		return "", err
	}
	defer file.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			if p.Filesz > 4096 {
				return "", fmt.Errorf("PT_INTERP of %d bytes", p.Filesz)
			}
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", err
			}
			return string(bytes.TrimRight(b, "\x00")), nil
		}
	}
	return "", errors.New("no PT_INTERP")
}

// programBias returns the load bias of the program at path whose program
// headers are at phdr in memory, and the link-time address of its
// PT_DYNAMIC (0: none).
func programBias(path string, phdr uint64) (bias, dynamic uint64, err error) {
	file, _, err := elfread.OpenRegular(path)
	if err != nil {
		return 0, 0, err
	}
	raw, err := io.ReadAll(file)
	file.Close()
	if err != nil {
		return 0, 0, err
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		return 0, 0, err
	}
	if len(raw) < 64 || f.Class != elf.ELFCLASS64 {
		return 0, 0, errors.New("not a 64-bit ELF file")
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if f.Data == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	phoff := order.Uint64(raw[32:])
	linked := uint64(0)
	found := false
	for _, p := range f.Progs {
		switch {
		case p.Type == elf.PT_PHDR:
			linked, found = p.Vaddr, true
		case p.Type == elf.PT_LOAD && !found && phoff >= p.Off && phoff < p.Off+p.Filesz:
			linked, found = p.Vaddr+phoff-p.Off, true
		case p.Type == elf.PT_DYNAMIC:
			dynamic = p.Vaddr
		}
	}
	if !found {
		return 0, 0, errors.New("program headers not in a PT_LOAD segment")
	}
	return phdr - linked, dynamic, nil
}

// memReader reads words and strings of a process's memory.
type memReader struct {
	mem   io.ReaderAt
	order binary.ByteOrder
}

func (r memReader) word(addr uint64) (uint64, bool) {
	var b [8]byte
	if addr > 1<<63 {
		return 0, false
	}
	if n, err := r.mem.ReadAt(b[:], int64(addr)); n < 8 && err != nil {
		return 0, false
	}
	return r.order.Uint64(b[:]), true
}

// cstring reads a NUL-terminated string of at most 4096 bytes.
func (r memReader) cstring(addr uint64) (string, error) {
	var out []byte
	var b [1]byte
	for len(out) < 4096 {
		if addr > 1<<63 {
			return "", errUnmapped
		}
		if _, err := r.mem.ReadAt(b[:], int64(addr)); err != nil {
			return "", fmt.Errorf("string at %#x: %w", addr, err)
		}
		if b[0] == 0 {
			return string(out), nil
		}
		out = append(out, b[0])
		addr++
	}
	return "", fmt.Errorf("string at %#x: longer than 4096 bytes", addr)
}

// openELF opens the ELF file at path as every file a walk reads is
// opened (openRegular: without waiting on a FIFO, only a regular file),
// its headers charged to meter before they are read, and returns its size
// too. Close the *os.File when done.
func openELF(path string, meter Meter) (*elf.File, *os.File, int64, error) {
	file, st, err := elfread.OpenRegular(path)
	if err != nil {
		return nil, nil, 0, err
	}
	f, err := meter.ReadELF(file, st.Size())
	if err != nil {
		file.Close()
		return nil, nil, 0, err
	}
	return f, file, st.Size(), nil
}
