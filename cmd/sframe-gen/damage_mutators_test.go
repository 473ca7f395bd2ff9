package main

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"math/rand"
)

// This file builds the damaged inputs of TestDamage: each mutator takes a
// copy of a sound ELF64 file and breaks one thing in it, deterministically
// from the random source it is given.

// mutators lists every kind of damage TestDamage makes.
func mutators() []mutator {
	return []mutator{
		// Bit flips.
		{"flip-ehdr", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte { return flipBits(r, d, 0, 64, 3) }, "1-3 bits of the ELF header"},
		{"flip-phdrs", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			return flipBits(r, d, l.phoff, l.phoff+uint64(l.phnum*l.phentsize), 4)
		}, "1-4 bits of the program header table"},
		{"flip-shdrs", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			return flipBits(r, d, l.shoff, l.shoff+uint64(l.shnum*l.shentsize), 4)
		}, "1-4 bits of the section header table"},
		{"flip-cfi", 4, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, l.cfiSec())
			if !ok {
				return nil
			}
			return flipBits(r, d, lo, hi, 8)
		}, "1-8 bits of .eh_frame (.debug_frame)"},
		{"flip-rela-cfi", 1, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, l.index(".rela.eh_frame"))
			if !ok {
				return nil
			}
			return flipBits(r, d, lo, hi, 4)
		}, "1-4 bits of .rela.eh_frame"},
		{"flip-sframe", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, l.index(".sframe"))
			if !ok {
				return nil
			}
			return flipBits(r, d, lo, hi, 4)
		}, "1-4 bits of an existing .sframe"},
		{"flip-symtab", 1, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, l.index(".symtab"))
			if !ok {
				return nil
			}
			return flipBits(r, d, lo, hi, 8)
		}, "1-8 bits of .symtab"},
		{"flip-any", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte { return flipBits(r, d, 0, uint64(len(d)), 16) }, "1-16 bits anywhere"},

		// Truncations.
		{"trunc-ehdr", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte { return truncAt(r, d, 0, 64) }, "inside the ELF header"},
		{"trunc-phdrs", 1, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			return truncAt(r, d, l.phoff, l.phoff+uint64(l.phnum*l.phentsize))
		}, "inside the program header table"},
		{"trunc-shdrs", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			return truncAt(r, d, l.shoff, l.shoff+uint64(l.shnum*l.shentsize))
		}, "inside the section header table"},
		{"trunc-section", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, pick(r, l.dataSecs()))
			if !ok {
				return nil
			}
			return truncAt(r, d, lo, hi)
		}, "inside a random section"},
		{"trunc-cfi", 1, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, l.cfiSec())
			if !ok {
				return nil
			}
			return truncAt(r, d, lo, hi)
		}, "inside .eh_frame"},
		{"trunc-boundary", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, pick(r, l.dataSecs()))
			if !ok {
				return nil
			}
			if r.Intn(2) == 0 {
				return d[:lo]
			}
			return d[:hi]
		}, "exactly at a section's start or end"},
		// The section header table kept, the CFI section's data cut off:
		// the header table is moved to the cut.
		{"cut-cfi-keep-shdrs", 1, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, l.cfiSec())
			if !ok || l.shoff < hi {
				return nil
			}
			cut := lo + uint64(r.Int63n(int64(hi-lo)))
			tab := append([]byte(nil), d[l.shoff:l.shoff+uint64(l.shnum*l.shentsize)]...)
			out := append(d[:cut:cut], tab...)
			l.bo.PutUint64(out[0x28:], cut)
			return out
		}, "file cut inside .eh_frame, section headers moved to the cut"},

		// Sections that overlap or point outside the file.
		{"overlap", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			a, b := pick(r, l.dataSecs()), pick(r, l.dataSecs())
			if a < 0 || a == b {
				return nil
			}
			return l.putShdr(d, a, shOffset, l.secs[b].offset+uint64(r.Int63n(int64(l.secs[b].size))))
		}, "a section moved onto another"},
		{"overlap-headers", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			i := l.cfiSec()
			if i < 0 {
				i = pick(r, l.dataSecs())
			}
			return l.putShdr(d, i, shOffset, pickU64(r, 0, l.shoff, l.phoff))
		}, ".eh_frame moved onto the ELF header or a header table"},
		{"offset-outside", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			i := pick(r, append(l.dataSecs(), l.cfiSec(), l.cfiSec()))
			return l.putShdr(d, i, shOffset, pickU64(r, uint64(len(d)), uint64(len(d))+4096, 1<<62, 1<<63, ^uint64(0)-7))
		}, "sh_offset past the end of the file"},
		{"size-past-eof", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			i := pick(r, append(l.dataSecs(), l.cfiSec(), l.cfiSec()))
			if i < 0 {
				return nil
			}
			return l.putShdr(d, i, shSize, uint64(len(d))-l.secs[i].offset+1+uint64(r.Intn(4096)))
		}, "a section running a little past the end of the file"},
		{"size-huge", 4, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			cands := []int{l.cfiSec(), l.index(".symtab"), l.index(".strtab"), l.index(".shstrtab"),
				l.index(".rela.eh_frame"), l.index(".sframe"), l.index(".dynsym"), l.index(".dynamic"), pick(r, l.dataSecs())}
			i := pick(r, cands)
			return l.putShdr(d, i, shSize, pickU64(r, 1<<60, 1<<63, ^uint64(0), 1<<32, 1<<40))
		}, "sh_size = 1<<60 and other absurd sizes"},
		{"shdr-fields", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			i := pick(r, []int{l.cfiSec(), l.index(".symtab"), l.index(".rela.eh_frame"), l.index(".text"), l.index(".dynsym"), pick(r, l.dataSecs())})
			switch r.Intn(5) {
			case 0:
				return l.putShdr(d, i, shLink, pickU64(r, 0xffff, 0xffffffff, uint64(len(l.secs)), uint64(i)))
			case 1:
				return l.putShdr(d, i, shInfo, pickU64(r, 0xffff, 0xffffffff, uint64(len(l.secs)), uint64(i)))
			case 2:
				return l.putShdr(d, i, shEnt, pickU64(r, 0, 1, 7, 1<<62))
			case 3:
				return l.putShdr(d, i, shAlign, pickU64(r, 3, 1<<63, ^uint64(0)))
			default:
				return l.putShdr(d, i, shType, pickU64(r, uint64(elf.SHT_NOBITS), uint64(elf.SHT_RELA), uint64(elf.SHT_SYMTAB), uint64(elf.SHT_STRTAB), 0x6ffffff4, 0xdeadbeef))
			}
		}, "sh_link, sh_info, sh_entsize, sh_addralign, sh_type forged"},
		{"phdr-fields", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			if l.phnum == 0 {
				return nil
			}
			i := r.Intn(l.phnum)
			switch r.Intn(5) {
			case 0:
				return l.putPhdr(d, i, phOffset, pickU64(r, uint64(len(d)), 1<<62, ^uint64(0)))
			case 1:
				return l.putPhdr(d, i, phFilesz, pickU64(r, uint64(len(d))+1, 1<<60, ^uint64(0)))
			case 2:
				return l.putPhdr(d, i, phMemsz, pickU64(r, 0, 1<<60, ^uint64(0)))
			case 3:
				return l.putPhdr(d, i, phVaddr, pickU64(r, ^uint64(0)-0xfff, 1<<63, 0))
			default:
				return l.putPhdr(d, i, phAlign, pickU64(r, 0, 3, 1<<63))
			}
		}, "p_offset, p_filesz, p_memsz, p_vaddr, p_align forged"},
		{"phdr-type", 1, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			if l.phnum == 0 {
				return nil
			}
			return l.putPhdr(d, r.Intn(l.phnum), phType, pickU64(r, uint64(elf.PT_LOAD), uint64(elf.PT_DYNAMIC), uint64(elf.PT_NOTE), 0x6474e550, 0x6474e554, uint64(elf.PT_PHDR)))
		}, "a program header's type changed (PT_LOAD, PT_GNU_EH_FRAME, PT_GNU_SFRAME...)"},

		{"load-layout", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			var loads []int
			for i := 0; i < l.phnum; i++ {
				p := l.phoff + uint64(i*l.phentsize)
				if l.bo.Uint32(d[p:]) == uint32(elf.PT_LOAD) {
					loads = append(loads, i)
				}
			}
			if len(loads) < 2 {
				return nil
			}
			a, b := loads[r.Intn(len(loads))], loads[r.Intn(len(loads))]
			pa, pb := l.phoff+uint64(a*l.phentsize), l.phoff+uint64(b*l.phentsize)
			switch r.Intn(4) {
			case 0: // two PT_LOADs at one address
				copy(d[pa+phVaddr:pa+phVaddr+8], d[pb+phVaddr:pb+phVaddr+8])
			case 1: // p_offset not congruent to p_vaddr
				l.bo.PutUint64(d[pa+phOffset:], l.bo.Uint64(d[pa+phOffset:])+1+uint64(r.Intn(7)))
			case 2: // the last segment ends at the top of the address space
				last := loads[len(loads)-1]
				pl := l.phoff + uint64(last*l.phentsize)
				l.bo.PutUint64(d[pl+phVaddr:], -l.bo.Uint64(d[pl+phMemsz:])-uint64(r.Intn(2))*0x1000)
			default: // PT_LOADs swapped (not sorted by address)
				var tmp [0x38]byte
				copy(tmp[:], d[pa:pa+0x38])
				copy(d[pa:pa+0x38], d[pb:pb+0x38])
				copy(d[pb:pb+0x38], tmp[:])
			}
			return d
		}, "PT_LOADs overlapping, incongruent, unsorted, at the top of the address space"},
		{"sframe-phdr", 1, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			for i := 0; i < l.phnum; i++ {
				p := l.phoff + uint64(i*l.phentsize)
				if l.bo.Uint32(d[p:]) == 0x6474e554 { // PT_GNU_SFRAME
					f := []int{phOffset, phVaddr, phFilesz, phMemsz}[r.Intn(4)]
					return l.putPhdr(d, i, f, pickU64(r, 0, uint64(len(d)), 1<<62, ^uint64(0)))
				}
			}
			return nil
		}, "an existing PT_GNU_SFRAME pointing elsewhere"},

		// Absurd counts in the ELF header.
		{"ehdr-counts", 6, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			switch r.Intn(10) {
			case 0:
				l.bo.PutUint16(d[0x3c:], uint16(pickU64(r, 0xffff, 0xfeff, 0xff00, uint64(l.shnum+1))))
			case 1: // extended numbering: e_shnum 0, count in section 0's sh_size
				l.bo.PutUint16(d[0x3c:], 0)
				if l.shoff+0x28 <= uint64(len(d)) {
					l.bo.PutUint64(d[l.shoff+shSize:], pickU64(r, 1<<32-1, 1<<60, uint64(l.shnum)+1))
				}
			case 2:
				l.bo.PutUint64(d[0x28:], pickU64(r, uint64(len(d))-10, 1<<63, ^uint64(0)-63, 1))
			case 3:
				l.bo.PutUint16(d[0x3a:], uint16(pickU64(r, 0, 1, 0x3f, 0xffff)))
			case 4:
				l.bo.PutUint16(d[0x38:], uint16(pickU64(r, 0xffff, uint64(l.phnum+1), 0)))
			case 5:
				l.bo.PutUint16(d[0x36:], uint16(pickU64(r, 0, 1, 0x37, 0xffff)))
			case 6:
				l.bo.PutUint16(d[0x3e:], uint16(pickU64(r, 0xffff, uint64(l.shnum), 0, 1)))
			case 7:
				l.bo.PutUint64(d[0x20:], pickU64(r, uint64(len(d))-8, 1<<63, ^uint64(0)-55))
			case 8: // e_shstrndx escape: index in section 0's sh_link
				l.bo.PutUint16(d[0x3e:], 0xffff)
				if l.shoff+0x30 <= uint64(len(d)) {
					l.bo.PutUint32(d[l.shoff+shLink:], uint32(pickU64(r, 0xffffffff, uint64(l.shnum), 1)))
				}
			default:
				d[0x05] = byte(3 - int(d[0x05])) // the other byte order
			}
			return d
		}, "e_shnum, e_phnum, e_shoff, e_phoff, e_shentsize, e_phentsize, e_shstrndx, EI_DATA forged"},

		// Damage inside .eh_frame entries.
		{"cie-len64", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			es := l.entries()
			if len(es) == 0 {
				return nil
			}
			e := es[r.Intn(len(es))]
			if e[0]+12 > uint64(len(d)) {
				return nil
			}
			l.bo.PutUint32(d[e[0]:], 0xffffffff)
			l.bo.PutUint64(d[e[0]+4:], pickU64(r, 1<<60, 1<<63, ^uint64(0), ^uint64(0)-3, uint64(len(d))))
			return d
		}, "an entry's length 0xffffffff with an absurd 64-bit length"},
		{"entry-len32", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			es := l.entries()
			if len(es) == 0 {
				return nil
			}
			e := es[r.Intn(len(es))]
			n := e[1] - e[0] - 4
			l.bo.PutUint32(d[e[0]:], uint32(pickU64(r, 0, 1, 3, n+4, n-4, 0xfffffff0, 0xfffffffe)))
			return d
		}, "an entry's 32-bit length forged (0, too short, too long, 0xfffffff0)"},
		{"cie-pointer", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			if l.frames == nil || len(l.frames.FDEs) == 0 {
				return nil
			}
			f := l.frames.FDEs[r.Intn(len(l.frames.FDEs))]
			if f.Format64 {
				return nil
			}
			p := l.secs[l.framesSec].offset + f.Offset + 4
			l.bo.PutUint32(d[p:], uint32(pickU64(r, 0, 4, 0xffffffff, 1<<31, f.Offset+4, f.Offset+8, uint64(r.Uint32()))))
			return d
		}, "an FDE's CIE pointer at itself, outside the section, at a non-CIE"},
		{"cie-fields", 4, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			if l.frames == nil || len(l.frames.CIEs) == 0 {
				return nil
			}
			c := l.frames.CIEs[r.Intn(len(l.frames.CIEs))]
			ver, aug, rb := cieFields(d, l, c)
			switch r.Intn(3) {
			case 0:
				d[ver] = byte(pickU64(r, 0, 2, 3, 4, 5, 0xff))
			case 1:
				augs := []string{"zPLR", "eh", "zRS", "zRB", "zRG", "zX", "z", "zLLLLLLLL", "zPPPPPPP"}
				a := augs[r.Intn(len(augs))]
				n := 0
				for aug+uint64(n) < uint64(len(d)) && d[aug+uint64(n)] != 0 {
					n++
				}
				if len(a) > n {
					a = a[:n]
				}
				copy(d[aug:], a)
			default:
				if rb == 0 {
					return nil
				}
				d[rb] = byte(pickU64(r, 0x00, 0x01, 0x02, 0x04, 0x09, 0x0c, 0x0f, 0x1b, 0x3b, 0x5b, 0x80, 0x9b, 0xff, uint64(r.Intn(256))))
			}
			return d
		}, "CIE version, augmentation string, FDE pointer encoding forged"},
		{"uleb-runaway", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			es := l.entries()
			if len(es) == 0 {
				return nil
			}
			e := es[r.Intn(len(es))]
			body := e[0] + 8
			if body >= e[1] {
				return nil
			}
			fill := byte(pickU64(r, 0xff, 0x80))
			for p := body + uint64(r.Int63n(int64(e[1]-body))); p < e[1]; p++ {
				d[p] = fill
			}
			return d
		}, "an entry's tail filled with 0x80/0xff: ULEBs that never end inside it"},
		{"uleb-huge", 6, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			huge := pickU64(r, 1<<63, ^uint64(0), 1<<40, 1<<32+5)
			var code []byte
			switch r.Intn(8) {
			case 0: // DW_CFA_offset_extended huge-reg, 1
				code = append(append([]byte{0x05}, ulebN(huge, 10)...), 1)
			case 1: // DW_CFA_def_cfa_offset huge
				code = append([]byte{0x0e}, ulebN(huge, 10)...)
			case 2: // DW_CFA_def_cfa huge-reg, 8
				code = append(append([]byte{0x0c}, ulebN(huge, 10)...), 8)
			case 3: // DW_CFA_expression reg 6, length huge
				code = append([]byte{0x10, 6}, ulebN(huge, 10)...)
			case 4: // DW_CFA_def_cfa_expression length huge
				code = append([]byte{0x0f}, ulebN(huge, 10)...)
			case 5: // DW_CFA_advance_loc4 0xffffffff, then DW_CFA_register huge huge
				code = append(append([]byte{0x04, 0xff, 0xff, 0xff, 0xff, 0x09}, ulebN(huge, 10)...), ulebN(huge, 10)...)
			case 6: // DW_CFA_val_offset_sf huge-reg, huge
				code = append(append([]byte{0x15}, ulebN(huge, 10)...), ulebN(huge, 10)...)
			default: // DW_CFA_restore_extended huge, DW_CFA_GNU_args_size huge, DW_CFA_undefined huge
				code = append(append(append(append([]byte{0x06}, ulebN(huge, 10)...), 0x2e), ulebN(huge, 10)...), 0x07)
				code = append(code, ulebN(huge, 10)...)
			}
			return putInstrs(r, d, l, code)
		}, "call-frame instructions with huge ULEB operands (registers, offsets, expression lengths)"},
		{"instr-garbage", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			code := make([]byte, 4+r.Intn(24))
			for i := range code {
				code[i] = byte(r.Intn(256))
			}
			if r.Intn(2) == 0 { // remember_state storms and unknown ops
				for i := range code {
					code[i] = []byte{0x0a, 0x0a, 0x0b, 0x3f, 0x2f, 0x16, 0x14}[r.Intn(7)]
				}
			}
			return putInstrs(r, d, l, code)
		}, "random call-frame instruction bytes, remember_state storms, unknown opcodes"},
		{"fde-range", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			if l.frames == nil || len(l.frames.FDEs) == 0 {
				return nil
			}
			f := l.frames.FDEs[r.Intn(len(l.frames.FDEs))]
			if f.Format64 || f.CIE.FDEEncoding&0x0f != 0x0b && f.CIE.FDEEncoding&0x0f != 0x03 {
				return nil
			}
			p := l.secs[l.framesSec].offset + f.Offset + 8
			switch r.Intn(3) {
			case 0:
				l.bo.PutUint32(d[p+4:], uint32(pickU64(r, 0, 0xffffffff, 1<<31)))
			case 1:
				l.bo.PutUint32(d[p:], uint32(pickU64(r, 0x7fffffff, 0x80000000, 0xffffffff)))
			default:
				l.bo.PutUint32(d[p:], 0x7fffffff)
				l.bo.PutUint32(d[p+4:], 0xffffffff)
			}
			return d
		}, "an FDE's start and range forged (wrapping, empty, huge)"},
		{"rela-forge", 2, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			cands := []int{l.index(".rela.eh_frame"), l.index(".rela.sframe"), l.index(".rela.debug_frame")}
			lo, hi, ok := secData(l, pick(r, cands))
			if !ok || hi-lo < 24 {
				return nil
			}
			p := lo + 24*uint64(r.Int63n(int64((hi-lo)/24)))
			switch r.Intn(3) {
			case 0: // r_offset
				l.bo.PutUint64(d[p:], pickU64(r, 1<<62, ^uint64(0), hi-lo-1))
			case 1: // r_info: symbol index huge, odd type
				l.bo.PutUint64(d[p+8:], pickU64(r, 0xffffffff<<32|2, 0x7fff<<32|0xff, 0x1<<32|0x3ff))
			default: // r_addend
				l.bo.PutUint64(d[p+16:], pickU64(r, 1<<63, ^uint64(0)))
			}
			return d
		}, "relocations with offsets outside, huge symbol indices, odd types"},
		{"sframe-header", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			lo, hi, ok := secData(l, l.index(".sframe"))
			if !ok || hi-lo < 28 {
				return nil
			}
			field := lo + uint64(8+4*r.Intn(5)) // num_fdes, num_fres, fre_len, fdeoff, freoff
			l.bo.PutUint32(d[field:], uint32(pickU64(r, 0xffffffff, 0x7fffffff, 1<<28, uint64(r.Uint32()))))
			return d
		}, "an existing .sframe's counts and offsets forged"},
		{"compressed", 3, func(r *rand.Rand, d []byte, l *elfLayout) []byte {
			i := l.cfiSec()
			lo, hi, ok := secData(l, i)
			if !ok {
				return nil
			}
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			zw.Write(d[lo:hi])
			zw.Close()
			body := z.Bytes()
			if r.Intn(3) == 0 {
				body = body[:len(body)/2] // a cut stream
			}
			if 24+uint64(len(body)) > hi-lo {
				return nil
			}
			l.bo.PutUint32(d[lo:], pickU32(r, 1, 1, 2, 0xffff)) // ELFCOMPRESS_ZLIB, ZSTD, unknown
			l.bo.PutUint32(d[lo+4:], 0)
			l.bo.PutUint64(d[lo+8:], pickU64(r, 1<<60, ^uint64(0), hi-lo, 1<<32)) // ch_size
			l.bo.PutUint64(d[lo+16:], 1)
			copy(d[lo+24:], body)
			fl := l.bo.Uint64(d[l.secs[i].hdr+shFlags:])
			l.putShdr(d, i, shFlags, fl|uint64(elf.SHF_COMPRESSED))
			return l.putShdr(d, i, shSize, 24+uint64(len(body)))
		}, "the CFI section made SHF_COMPRESSED with a forged uncompressed size"},
	}
}

func pickU32(r *rand.Rand, vs ...uint32) uint32 { return vs[r.Intn(len(vs))] }
