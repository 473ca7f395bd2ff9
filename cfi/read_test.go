package cfi

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

func readBytes(t *testing.T, data []byte, src Source, order binary.ByteOrder) *Frames {
	t.Helper()
	fr, err := ReadSection(data, src, PointerContext{Order: order, AddrSize: 8, SectionAddr: 0x10000})
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

func errorStrings(fr *Frames) []string {
	var s []string
	for _, e := range fr.Errors {
		s = append(s, e.Error())
	}
	return s
}

func TestReadCIEs(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			s := &secBuilder{order: order, eh: true}
			// v1 "zPLRSBG": personality pcrel|sdata4, LSDA udata4, FDE pcrel|sdata4.
			c1 := s.cie(false, cat([]byte{1}, []byte("zPLRSBG\x00"), ulebBytes(4), slebBytes(-8), []byte{30},
				ulebBytes(1+4+1+1), []byte{0x1b}, s.u32(0x100), []byte{0x03, 0x1b}, []byte{0x0c, 31, 0}))
			// FDE: pc pcrel sdata4 -> start; range; aug data: LSDA udata4.
			fdeOff := len(s.b)
			s.fde(false, c1, cat(s.u32(0xfffff000), s.u32(0x40), ulebBytes(4), s.u32(0x5000), []byte{0x2d}))
			// v3 "zR" with a 2-byte RA column.
			c3 := s.cie(false, cat([]byte{3}, []byte("zR\x00"), ulebBytes(1), slebBytes(-8), ulebBytes(128), ulebBytes(1), []byte{0x04}))
			s.fde(false, c3, cat(s.u64(0x2000), s.u64(0x10), []byte{0}))
			// 64-bit length eh CIE and FDE.
			c64 := s.cie(true, cat([]byte{1}, []byte("zR\x00"), ulebBytes(1), slebBytes(-8), []byte{16}, ulebBytes(1), []byte{0x04}))
			s.fde(true, c64, cat(s.u64(0x3000), s.u64(0x20), []byte{0}))
			// Old GCC "eh": 8 bytes of exception table pointer.
			ceh := s.cie(false, cat([]byte{1}, []byte("eh\x00"), s.u64(0xdead), ulebBytes(1), slebBytes(-4), []byte{8}))
			s.fde(false, ceh, cat(s.u64(0x4000), s.u64(0x8)))
			s.b = append(s.b, 0, 0, 0, 0) // terminator
			fr := readBytes(t, s.b, EHFrame, order)
			if len(fr.Errors) > 0 {
				t.Fatal(errorStrings(fr))
			}
			if len(fr.CIEs) != 4 || len(fr.FDEs) != 4 {
				t.Fatalf("%d CIEs, %d FDEs", len(fr.CIEs), len(fr.FDEs))
			}
			c := fr.CIEs[0]
			pers := uint64(0x10000 + c1 + 4 + 4 + 1 + 8 + 1 + 1 + 1 + 1 + 1)
			if c.Version != 1 || c.Augmentation != "zPLRSBG" || c.CodeAlign != 4 || c.DataAlign != -8 || c.RAColumn != 30 ||
				c.FDEEncoding != 0x1b || c.LSDAEncoding != 0x03 || !c.Signal || !c.BKey || !c.MTETagged ||
				c.Personality != pers+0x100 || string(c.Initial) != "\x0c\x1f\x00" {
				t.Errorf("CIE v1: %+v (personality want %#x)", c, pers+0x100)
			}
			f := fr.FDEs[0]
			wantStart := uint64(0x10000+fdeOff+8) - 0x1000
			if f.Start != wantStart || f.Size != 0x40 || f.LSDA != 0x5000 || string(f.Instructions) != "\x2d" || f.CIE != c {
				t.Errorf("FDE: %+v, want start %#x", f, wantStart)
			}
			if c := fr.CIEs[1]; c.Version != 3 || c.RAColumn != 128 {
				t.Errorf("CIE v3: %+v", c)
			}
			if f := fr.FDEs[1]; f.Start != 0x2000 || f.Size != 0x10 {
				t.Errorf("FDE of v3: %+v", f)
			}
			if c := fr.CIEs[2]; !c.Format64 || fr.FDEs[2].Start != 0x3000 || !fr.FDEs[2].Format64 {
				t.Errorf("64-bit: %+v %+v", c, fr.FDEs[2])
			}
			if f := fr.FDEs[3]; f.Start != 0x4000 || f.Size != 8 || fr.CIEs[3].DataAlign != -4 {
				t.Errorf("eh augmentation: %+v %+v", fr.CIEs[3], f)
			}
			// Row with negate_ra_state.
			it := fr.Rows(fr.FDEs[0])
			r, err := it.Next()
			if err != nil || !r.RAMangled || r.CFA.Reg != 31 {
				t.Errorf("row %+v, %v", r, err)
			}
		})
	}
}

func TestReadDebugFrame(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			s := &secBuilder{order: order}
			// v4 with 4-byte addresses and a 2-byte segment selector.
			c4 := s.cie(false, cat([]byte{4, 0, 4, 2}, ulebBytes(2), slebBytes(-4), ulebBytes(14), []byte{0x0c, 15}, ulebBytes(160)))
			s.fde(false, c4, cat(s.u16(7), s.u32(0x1000), s.u32(0x30), []byte{0x41, 0x0e, 200, 0x01}))
			// 64-bit DWARF.
			c64 := s.cie(true, cat([]byte{3, 0}, ulebBytes(1), slebBytes(-8), ulebBytes(16), x86CIE))
			s.fde(true, c64, cat(s.u64(0x2000), s.u64(0x10)))
			// A v1 CIE placed after its FDE.
			fdeOff := len(s.b)
			s.b = append(s.b, s.u32(4+16)...)
			cieAt := fdeOff + 4 + 4 + 16
			s.b = append(s.b, s.u32(uint32(cieAt))...)
			s.b = append(s.b, cat(s.u64(0x3000), s.u64(0x8))...)
			s.cie(false, cat([]byte{1, 0}, ulebBytes(1), slebBytes(-8), []byte{16}, x86CIE))
			fr := readBytes(t, s.b, DebugFrame, order)
			if len(fr.Errors) > 0 {
				t.Fatal(errorStrings(fr))
			}
			if len(fr.FDEs) != 3 || len(fr.CIEs) != 3 {
				t.Fatalf("%d FDEs %d CIEs", len(fr.FDEs), len(fr.CIEs))
			}
			if c := fr.CIEs[0]; c.Version != 4 || c.AddressSize != 4 || c.SegmentSize != 2 || c.CodeAlign != 2 || c.RAColumn != 14 {
				t.Errorf("v4 CIE %+v", c)
			}
			if f := fr.FDEs[0]; f.Start != 0x1000 || f.Size != 0x30 {
				t.Errorf("v4 FDE %+v", f)
			}
			it := fr.Rows(fr.FDEs[0])
			var got []string
			for r, err := it.Next(); err == nil; r, err = it.Next() {
				got = append(got, rowString(r))
			}
			want := "0x1000-0x1002 r15+160|0x1002-0x1030 r15+200"
			if strings.Join(got, "|") != want {
				t.Errorf("v4 rows %q, want %q", strings.Join(got, "|"), want)
			}
			if f := fr.FDEs[1]; f.Start != 0x2000 || !f.Format64 {
				t.Errorf("64-bit FDE %+v", f)
			}
			if f := fr.FDEs[2]; f.Start != 0x3000 || f.CIE.Offset != uint64(cieAt) {
				t.Errorf("forward CIE FDE %+v", f)
			}
			checkDataAliases(t, fr)
		})
	}
}

// checkDataAliases checks that fr.Data holds every entry's instructions at
// their offsets, as the same memory (lower's memo relies on it).
func checkDataAliases(t *testing.T, fr *Frames) {
	t.Helper()
	for i, f := range fr.FDEs {
		off, n := f.InstructionsOffset, uint64(len(f.Instructions))
		if off+n > uint64(len(fr.Data)) || n > 0 && &fr.Data[off] != &f.Instructions[0] {
			t.Errorf("FDE %d: instructions at %#x (%d bytes) are not Data's", i, off, n)
		}
	}
	for i, c := range fr.CIEs {
		off, n := c.InitialOffset, uint64(len(c.Initial))
		if off+n > uint64(len(fr.Data)) || n > 0 && &fr.Data[off] != &c.Initial[0] {
			t.Errorf("CIE %d: initial instructions at %#x (%d bytes) are not Data's", i, off, n)
		}
	}
}

func TestReadBroken(t *testing.T) {
	le := binary.LittleEndian
	good := func(s *secBuilder) int { return s.simpleCIE(1, -8, 16, PEUData8, x86CIE) }
	tests := []struct {
		name  string
		build func(s *secBuilder)
		fdes  int      // FDEs still read
		errs  []string // substrings of the errors, in order
	}{
		{"truncated length", func(s *secBuilder) {
			c := good(s)
			s.simpleFDE(c, 0x1000, 0x10, nil)
			s.b = append(s.b, 1, 2, 3)
		}, 1, []string{"3 bytes left: too short for a length field"}},
		{"length past the end", func(s *secBuilder) {
			c := good(s)
			s.simpleFDE(c, 0x1000, 0x10, nil)
			s.b = append(s.b, s.u32(100)...)
			s.b = append(s.b, 0, 0, 0, 0)
		}, 1, []string{"length 0x64 runs past the end of the section (0x4 bytes left)"}},
		{"reserved length", func(s *secBuilder) {
			s.b = append(s.b, s.u32(0xfffffff0)...)
		}, 0, []string{"offset 0x0: reserved length value 0xfffffff0"}},
		{"CIE pointer before the section", func(s *secBuilder) {
			c := good(s)
			s.entry(false, 0x1000, cat(s.u64(0x1000), s.u64(0x10), []byte{0}))
			s.simpleFDE(c, 0x2000, 0x10, nil)
		}, 1, []string{"CIE pointer 0x1000 points before the start of the section"}},
		{"CIE pointer to an FDE", func(s *secBuilder) {
			c := good(s)
			f := s.simpleFDE(c, 0x1000, 0x10, nil)
			s.fde(false, f, cat(s.u64(0x1000), s.u64(0x10), []byte{0}))
		}, 1, []string{"not a CIE"}},
		{"CIE pointer into the middle", func(s *secBuilder) {
			good(s)
			s.fde(false, 3, cat(s.u64(0x1000), s.u64(0x10), []byte{0}))
		}, 0, []string{"CIE at offset 0x3: a zero terminator"}},
		{"FDE too short", func(s *secBuilder) {
			c := good(s)
			s.fde(false, c, s.u32(0x1000))
			s.simpleFDE(c, 0x2000, 0x10, nil)
		}, 1, []string{"initial location: operand runs past the end"}},
		{"unsupported version", func(s *secBuilder) {
			c := s.cie(false, cat([]byte{2}, []byte("zR\x00"), ulebBytes(1), slebBytes(-8), []byte{16}, ulebBytes(1), []byte{0x04}))
			s.simpleFDE(c, 0x1000, 0x10, nil)
			c2 := good(s)
			s.simpleFDE(c2, 0x2000, 0x10, nil)
		}, 1, []string{"offset 0x0: unsupported CIE version 2", "CIE at offset 0x0: unsupported CIE version 2"}},
		{"unknown augmentation", func(s *secBuilder) {
			c := s.cie(false, cat([]byte{1}, []byte("zRX\x00"), ulebBytes(1), slebBytes(-8), []byte{16}, ulebBytes(1), []byte{0x04}))
			s.simpleFDE(c, 0x1000, 0x10, nil)
		}, 0, []string{"offset 0x0: unknown augmentation character 'X' in \"zRX\"", "CIE at offset 0x0: unknown augmentation"}},
		{"augmentation without z", func(s *secBuilder) {
			s.cie(false, cat([]byte{1}, []byte("R\x00"), ulebBytes(1), slebBytes(-8), []byte{16}))
		}, 0, []string{"offset 0x0: unknown augmentation \"R\""}},
		{"augmentation string not terminated", func(s *secBuilder) {
			s.cie(false, []byte{1, 'z', 'R'})
		}, 0, []string{"offset 0x0: augmentation string not terminated"}},
		{"augmentation data past the end", func(s *secBuilder) {
			s.cie(false, cat([]byte{1}, []byte("zR\x00"), ulebBytes(1), slebBytes(-8), []byte{16}, ulebBytes(40), []byte{0x04}))
		}, 0, []string{"offset 0x0: augmentation data length 40 runs past the end of the CIE"}},
		{"bad FDE encoding", func(s *secBuilder) {
			s.cie(false, cat([]byte{1}, []byte("zR\x00"), ulebBytes(1), slebBytes(-8), []byte{16}, ulebBytes(1), []byte{0x07}))
		}, 0, []string{"offset 0x0: FDE pointer encoding 0x7 not usable"}},
		{"absurd code alignment", func(s *secBuilder) {
			s.cie(false, cat([]byte{1}, []byte("zR\x00"), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, slebBytes(-8), []byte{16}, ulebBytes(1), []byte{0x04}))
		}, 0, []string{"offset 0x0: code alignment factor: LEB128 value does not fit in 64 bits"}},
		{"range wraps", func(s *secBuilder) {
			c := good(s)
			s.simpleFDE(c, 0xfffffffffffffff0, 0x20, nil)
		}, 0, []string{"address range 0xfffffffffffffff0..+0x20 wraps around"}},
		{"zero terminator in the middle", func(s *secBuilder) {
			c := good(s)
			s.b = append(s.b, 0, 0, 0, 0)
			s.simpleFDE(c, 0x1000, 0x10, nil)
		}, 1, nil},
		{"CIE id too short", func(s *secBuilder) {
			s.b = append(s.b, s.u32(2)...)
			s.b = append(s.b, 0, 0)
			c := good(s)
			s.simpleFDE(c, 0x1000, 0x10, nil)
		}, 1, []string{"offset 0x0: length 0x2 too short for the CIE id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &secBuilder{order: le, eh: true}
			tt.build(s)
			fr := readBytes(t, s.b, EHFrame, le)
			if len(fr.FDEs) != tt.fdes {
				t.Errorf("%d FDEs read, want %d", len(fr.FDEs), tt.fdes)
			}
			got := errorStrings(fr)
			if len(got) != len(tt.errs) {
				t.Fatalf("errors %q, want %q", got, tt.errs)
			}
			for i, e := range tt.errs {
				if !strings.HasPrefix(got[i], ".eh_frame: ") || !strings.Contains(got[i], e) {
					t.Errorf("error %q, want %q", got[i], e)
				}
			}
		})
	}
}

// TestBrokenCIESameMessage: every FDE whose CIE pointer names something
// that is not a CIE gets the same message (the reader's one-entry cache
// gave the second one a bare "not a CIE": finding 20).
func TestBrokenCIESameMessage(t *testing.T) {
	for _, eh := range []bool{false, true} {
		s := &secBuilder{order: binary.LittleEndian, eh: eh}
		c := s.simpleCIE(1, -8, 16, PEUData8, x86CIE)
		target := s.simpleFDE(c, 0x1000, 0x10, nil) // an FDE, not a CIE
		for i := 0; i < 3; i++ {
			off := s.simpleFDE(c, 0x2000, 0x10, nil)
			// Point this FDE's CIE pointer at the first FDE.
			ptr := uint32(target)
			if eh {
				ptr = uint32(off + 4 - target)
			}
			binary.LittleEndian.PutUint32(s.b[off+4:], ptr)
		}
		src := DebugFrame
		if eh {
			src = EHFrame
		}
		fr := readBytes(t, s.b, src, binary.LittleEndian)
		errs := errorStrings(fr)
		if len(errs) != 3 {
			t.Fatalf("eh %v: errors %q, want 3", eh, errs)
		}
		for _, e := range errs {
			want := fmt.Sprintf("CIE at offset %#x: not a CIE", target)
			if !strings.HasSuffix(e, want) {
				t.Errorf("eh %v: error %q, want one ending in %q", eh, e, want)
			}
		}
	}
}
