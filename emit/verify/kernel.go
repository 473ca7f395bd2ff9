package verify

import (
	"debug/elf"
	"fmt"
)

// ExecHeader is a program header other than PT_LOAD with PF_X, and what
// the Linux kernel's SFrame registration does with it.
type ExecHeader struct {
	// Index is the header's index in the program header table.
	Index int
	Type  elf.ProgType
	// Takes is the index of the executable PT_LOAD whose registration
	// the kernel refuses because this header's, made before it, holds
	// (part of) its range; -1 when none is (the header is harmless).
	Takes int
	// Why says what becomes of the header's registration.
	Why string
}

// kernelPage is the page size the model rounds PT_LOAD mappings to (the
// smallest a kernel uses: 4 KiB).
const kernelPage = 4096

// ExecHeaders models the Linux kernel's registration of a linked file's
// SFrame section (fs/binfmt_elf.c and kernel/unwind/sframe.c of the SFrame
// unwinder series): load_elf_binary calls sframe_add_section once for
// every program header with PF_X, in table order, over the text range
// [bias+p_vaddr, bias+p_vaddr+p_memsz]. A registration is refused when an
// end of the range is 0 (p_vaddr 0 in an ET_EXEC file), when the range
// does not lie in an executable mapping, or when it overlaps a range
// registered before (mtree_insert_range); the refusal is ignored. So a
// PF_X header that is not a PT_LOAD (PT_GNU_STACK of an executable stack,
// PT_PHDR of old linkers) does harm only when its registration is accepted
// before that of an executable PT_LOAD it overlaps, which is then refused:
// the section no longer covers that text. ExecHeaders returns every such
// header with what becomes of it.
func ExecHeaders(f *elf.File) []ExecHeader {
	type reg struct {
		start, end uint64 // inclusive, as mtree_insert_range takes them
		idx        int
	}
	// For ET_DYN the load bias is a non-zero page address; relations
	// between ranges do not depend on it, zero tests do.
	var bias uint64
	if f.Type == elf.ET_DYN {
		bias = 1 << 40
	}
	var taken []reg
	var out []ExecHeader
	for i, p := range f.Progs {
		if p.Flags&elf.PF_X == 0 {
			continue
		}
		start, end := bias+p.Vaddr, bias+p.Vaddr+p.Memsz
		var h *ExecHeader
		if p.Type != elf.PT_LOAD {
			out = append(out, ExecHeader{Index: i, Type: p.Type, Takes: -1})
			h = &out[len(out)-1]
		}
		switch {
		case start == 0 || end == 0:
			if h != nil {
				h.Why = fmt.Sprintf("the kernel refuses its registration (text address 0 in an %v file)", f.Type)
			}
			continue
		case !inExecMapping(f, start-bias, end-bias):
			if h != nil {
				h.Why = "the kernel refuses its registration (its range is not in an executable mapping)"
			}
			continue
		}
		clash := -1
		for _, r := range taken {
			if start <= r.end && r.start <= end {
				clash = r.idx
				break
			}
		}
		if clash >= 0 {
			if h != nil {
				h.Why = fmt.Sprintf("the kernel refuses its registration (its range overlaps that of program header %d, registered before)", clash)
				continue
			}
			for k := range out {
				if out[k].Index == clash && f.Progs[clash].Type != elf.PT_LOAD {
					out[k].Takes = i
					out[k].Why = fmt.Sprintf("the kernel registers the section for it before program header %d (the executable PT_LOAD it overlaps), whose registration is then refused", i)
				}
			}
			continue
		}
		taken = append(taken, reg{start, end, i})
		if h != nil {
			h.Why = "the kernel registers the section for its range too (it overlaps no executable PT_LOAD registered after it)"
		}
	}
	return out
}

// inExecMapping reports whether [start, end] lies in the mapping of one
// executable PT_LOAD (its pages).
func inExecMapping(f *elf.File, start, end uint64) bool {
	for _, l := range f.Progs {
		if l.Type != elf.PT_LOAD || l.Flags&elf.PF_X == 0 || l.Memsz == 0 {
			continue
		}
		lo := l.Vaddr &^ (kernelPage - 1)
		hi := (l.Vaddr + l.Memsz + kernelPage - 1) &^ (kernelPage - 1)
		if lo <= start && start < hi && end <= hi {
			return true
		}
	}
	return false
}
