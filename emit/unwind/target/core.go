package target

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/unwind"
)

// Note types of an ELF core (linux/elf.h).
const (
	ntPRSTATUS = 1
	ntAUXV     = 6
	ntFILE     = 0x46494c45
)

// Thread is one thread of a stopped process: its id and registers.
type Thread struct {
	TID  int
	Regs unwind.Regs
}

// mapping is one file mapping of a process (NT_FILE, /proc/PID/maps).
type mapping struct {
	Start, End, Offset uint64
	Path               string
	// File, when set, names the very file mapped, to read before Path
	// (--pid: /proc/PID/map_files/START-END, which holds the file even
	// when Path names another one since, or none).
	File string
}

// core is what a core's notes say: the threads, and the files mapped
// (or, without NT_FILE, the auxiliary vector to find them from).
type core struct {
	abi      emit.ABI
	threads  []Thread
	mappings []mapping
	auxv     map[uint64]uint64
}

// coreMem reads a core's memory from its PT_LOAD segments.
type coreMem struct {
	r    io.ReaderAt
	segs []*elf.Prog // PT_LOAD, in address order
}

// ReadAt reads the bytes at virtual address addr that the core holds.
func (m *coreMem) ReadAt(p []byte, addr int64) (int, error) {
	a := uint64(addr)
	i, _ := slices.BinarySearchFunc(m.segs, a, func(s *elf.Prog, a uint64) int {
		if s.Vaddr <= a {
			return -1
		}
		return 1
	})
	if i == 0 {
		return 0, errUnmapped
	}
	s := m.segs[i-1]
	if a+uint64(len(p)) > s.Vaddr+s.Filesz || a+uint64(len(p)) < a {
		return 0, errUnmapped
	}
	return m.r.ReadAt(p, int64(s.Off+a-s.Vaddr))
}

var errUnmapped = errors.New("address not in the core")

// coreABI returns the SFrame ABI of an ELF core's machine.
func coreABI(f *elf.File) (emit.ABI, error) {
	switch {
	case f.Machine == elf.EM_X86_64:
		return emit.ABIAMD64LittleEndian, nil
	case f.Machine == elf.EM_AARCH64 && f.Data == elf.ELFDATA2LSB:
		return emit.ABIAArch64LittleEndian, nil
	case f.Machine == elf.EM_AARCH64:
		return emit.ABIAArch64BigEndian, nil
	case f.Machine == elf.EM_S390 && f.Class == elf.ELFCLASS64:
		return emit.ABIS390XBigEndian, nil
	}
	return 0, fmt.Errorf("core of %v %v: SFrame has no ABI for it", f.Class, f.Machine)
}

// OpenCore opens the ELF core file at path: its threads and memory, and
// the modules of the process (from its NT_FILE note, or, without one
// (qemu-user's cores), from the dynamic linker's list in its memory, a
// relative path looked up from the core's directory too). Close it when
// done.
func OpenCore(path string, opts Options) (*Process, error) {
	file, st, err := elfread.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	p, err := openCore(file, st.Size(), path, opts)
	if err != nil {
		file.Close()
		return nil, err
	}
	p.close = file.Close
	return p, nil
}

// openCore reads the core file (size bytes) at path.
func openCore(file io.ReaderAt, size int64, path string, opts Options) (*Process, error) {
	meter := opts.meter()
	f, err := meter.ReadELF(file, size)
	if err != nil {
		return nil, err
	}
	if f.Type != elf.ET_CORE {
		return nil, fmt.Errorf("not a core file (ELF type %v)", f.Type)
	}
	c, mem, err := readCore(f, file, size, meter)
	if err != nil {
		return nil, err
	}
	p := &Process{ABI: c.abi, Mem: mem, Threads: c.threads}
	var mods []*Module
	if len(c.mappings) > 0 {
		mods = modulesFromMappings(c.mappings, opts.Sysroot, meter)
	} else if mods, err = modulesFromLinkMap(c, mem, opts.Sysroot, filepath.Dir(path), meter); err != nil {
		return nil, err
	}
	p.setModules(mods)
	return p, nil
}

// readCore reads the threads, mappings, auxiliary vector and memory of
// core f (size bytes), its notes charged to meter before they are read.
func readCore(f *elf.File, r io.ReaderAt, size int64, meter Meter) (*core, *coreMem, error) {
	abi, err := coreABI(f)
	if err != nil {
		return nil, nil, err
	}
	p := &core{abi: abi, auxv: map[uint64]uint64{}}
	mem := &coreMem{r: r}
	order := abi.ByteOrder()
	for _, prog := range f.Progs {
		switch prog.Type {
		case elf.PT_LOAD:
			mem.segs = append(mem.segs, prog)
		case elf.PT_NOTE:
			if prog.Off > uint64(size) || prog.Filesz > uint64(size)-prog.Off {
				return nil, nil, fmt.Errorf("PT_NOTE at offset %#x (%d bytes) extends past the end of the file (%#x bytes)", prog.Off, prog.Filesz, size)
			}
			if err := meter.ChargeNotes(int64(prog.Filesz)); err != nil {
				return nil, nil, err
			}
			data := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(data, 0); err != nil {
				return nil, nil, fmt.Errorf("PT_NOTE at offset %#x (%d bytes): truncated (%w)", prog.Off, prog.Filesz, err)
			}
			if err := p.readNotes(data, order); err != nil {
				return nil, nil, err
			}
		}
	}
	slices.SortFunc(mem.segs, func(a, b *elf.Prog) int { return cmp.Compare(a.Vaddr, b.Vaddr) })
	if len(p.threads) == 0 {
		return nil, nil, errors.New("core has no NT_PRSTATUS note (no thread)")
	}
	return p, mem, nil
}

// readNotes reads the notes of one PT_NOTE segment.
func (p *core) readNotes(data []byte, order binary.ByteOrder) error {
	for off := 0; off+12 <= len(data); {
		namesz, descsz, typ := order.Uint32(data[off:]), order.Uint32(data[off+4:]), order.Uint32(data[off+8:])
		nameEnd := off + 12 + int(align4(namesz))
		descEnd := nameEnd + int(align4(descsz))
		if namesz > 1<<20 || descsz > 1<<30 || nameEnd > len(data) || nameEnd+int(descsz) > len(data) {
			return fmt.Errorf("note at offset %#x of a PT_NOTE segment: size %d+%d runs past the segment", off, namesz, descsz)
		}
		name := string(bytes.TrimRight(data[off+12:off+12+int(namesz)], "\x00"))
		desc := data[nameEnd : nameEnd+int(descsz)]
		if name == "CORE" {
			if err := p.readNote(typ, desc, order); err != nil {
				return err
			}
		}
		off = min(descEnd, len(data))
	}
	return nil
}

func align4(n uint32) uint32 { return (n + 3) &^ 3 }

// readNote reads one CORE note.
func (p *core) readNote(typ uint32, desc []byte, order binary.ByteOrder) error {
	switch typ {
	case ntPRSTATUS:
		t, err := prstatus(p.abi, desc, order)
		if err != nil {
			return err
		}
		p.threads = append(p.threads, t)
	case ntAUXV:
		for i := 0; i+16 <= len(desc); i += 16 {
			p.auxv[order.Uint64(desc[i:])] = order.Uint64(desc[i+8:])
		}
	case ntFILE:
		m, err := ntFile(desc, order)
		if err != nil {
			return err
		}
		p.mappings = m
	}
	return nil
}

// prstatusRegs is the offset of pr_reg in a 64-bit struct elf_prstatus.
const prstatusRegs = 112

// prstatus reads a thread from an NT_PRSTATUS note.
func prstatus(abi emit.ABI, desc []byte, order binary.ByteOrder) (Thread, error) {
	var t Thread
	n := map[emit.ABI]int{emit.ABIAMD64LittleEndian: 27, emit.ABIS390XBigEndian: 18}[abi]
	if n == 0 {
		n = 34
	}
	if len(desc) < prstatusRegs+8*n {
		return t, fmt.Errorf("NT_PRSTATUS note of %d bytes, too short for %v registers", len(desc), abi)
	}
	t.TID = int(int32(order.Uint32(desc[32:])))
	reg := func(i int) uint64 { return order.Uint64(desc[prstatusRegs+8*i:]) }
	setRegs(abi, &t.Regs, reg)
	return t, nil
}

// amd64UserRegs is the place in struct user_regs_struct of each DWARF
// register 0-15 (rax rdx rcx rbx rsi rdi rbp rsp r8-r15); rip is 16.
var amd64UserRegs = [16]int{10, 12, 11, 5, 13, 14, 4, 19, 9, 8, 7, 6, 3, 2, 1, 0}

// setRegs fills r from the ptrace/core register set of abi, reg(i) being
// its i-th 8-byte word (user_regs_struct, user_pt_regs, s390_regs).
func setRegs(abi emit.ABI, r *unwind.Regs, reg func(int) uint64) {
	switch abi {
	case emit.ABIAMD64LittleEndian:
		for d, i := range amd64UserRegs {
			r.Set(uint32(d), reg(i))
		}
		r.PC = reg(16)
	case emit.ABIS390XBigEndian:
		for d := range 16 {
			r.Set(uint32(d), reg(2+d))
		}
		r.PC = reg(1)
	default:
		for d := range 32 {
			r.Set(uint32(d), reg(d))
		}
		r.PC = reg(32)
	}
}

// ntFile reads the file mappings of an NT_FILE note.
func ntFile(desc []byte, order binary.ByteOrder) ([]mapping, error) {
	if len(desc) < 16 {
		return nil, fmt.Errorf("NT_FILE note of %d bytes", len(desc))
	}
	count, page := order.Uint64(desc), order.Uint64(desc[8:])
	if count > uint64(len(desc))/24 {
		return nil, fmt.Errorf("NT_FILE note: %d mappings in %d bytes", count, len(desc))
	}
	names := bytes.Split(desc[16+24*count:], []byte{0})
	if uint64(len(names)) < count {
		return nil, fmt.Errorf("NT_FILE note: %d names for %d mappings", len(names), count)
	}
	ms := make([]mapping, count)
	for i := range ms {
		e := desc[16+24*i:]
		ms[i] = mapping{Start: order.Uint64(e), End: order.Uint64(e[8:]), Offset: order.Uint64(e[16:]) * page, Path: string(names[i])}
	}
	return ms, nil
}
