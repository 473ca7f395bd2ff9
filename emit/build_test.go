package emit

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestBuild builds every section ld made under testdata/link (and the
// spec's example) again function by function (AppendFDE) and checks that
// Encode and Size give its bytes and that it reads as the decoded one.
func TestBuild(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "*", "*.sframe"))
	if len(files) < 3 {
		t.Fatalf("found %d .sframe files under testdata/link", len(files))
	}
	raws := [][]byte{example61(t)}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	for n, raw := range raws {
		sec, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		// Append in FRE data order, then put the index back in order.
		fdes := functionsOf(t, sec)
		byData := make([]int, len(fdes))
		for i := range byData {
			byData[i] = i
		}
		slices.SortStableFunc(byData, func(a, b int) int { return cmp.Compare(fdes[a].FREOffset, fdes[b].FREOffset) })
		p := &Section{Header: sec.Header, Trailer: sec.Trailer}
		for _, i := range byData {
			if err := p.AppendFDE(fdes[i]); err != nil {
				t.Fatal(err)
			}
		}
		index := make([]IndexEntry, len(p.Index))
		for k, i := range byData {
			index[i] = p.Index[k]
		}
		p.Index = index
		// Func gives each function back but its FREs.
		for i := range fdes {
			f, err := p.Func(i)
			want := fdes[i]
			want.FREs = nil
			if want.FREOffset = f.FREOffset; err != nil || !reflect.DeepEqual(f, want) {
				t.Errorf("section %d: Func(%d) = %+v, %v; want %+v", n, i, f, err, want)
			}
		}
		got, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("section %d: the section built encodes otherwise than the one decoded", n)
		}
		// EncodeParts: the same bytes in pieces, the FRE data not copied.
		for _, sec := range []*Section{sec, p} {
			parts, err := sec.EncodeParts(nil)
			if err != nil {
				t.Fatal(err)
			}
			if joined := bytes.Join(parts, nil); !bytes.Equal(joined, want) {
				t.Errorf("section %d: EncodeParts differs from Encode", n)
			}
			if len(sec.FREData) > 0 && (len(parts) < 2 || &parts[1][0] != &sec.FREData[0]) {
				t.Errorf("section %d: EncodeParts copied the FRE data", n)
			}
		}
		if size, err := p.Size(); err != nil || size != len(want) {
			t.Errorf("section %d: Size() = %d, %v; want %d", n, size, err, len(want))
		}
		compareReads(t, fmt.Sprintf("section %d", n), p, sec)
	}
}

// compareReads requires the section p to read as sec, the same section
// made otherwise: FDE (FREs included), NumFREs, Dump and DumpJSON.
func compareReads(t *testing.T, name string, p, sec *Section) {
	t.Helper()
	fdes := functionsOf(t, sec)
	for i := range fdes {
		f, err := p.FDE(i)
		if err != nil || !reflect.DeepEqual(f.FREs, fdes[i].FREs) {
			t.Errorf("%s: FDE(%d) FREs = %+v, %v; want %+v", name, i, f.FREs, err, fdes[i].FREs)
		}
	}
	if p.NumFREs() != sec.NumFREs() {
		t.Errorf("%s: NumFREs %d, want %d", name, p.NumFREs(), sec.NumFREs())
	}
	for _, dump := range []func(io.Writer, *Section, uint64, string) error{Dump, DumpJSON} {
		var got, want bytes.Buffer
		if err := dump(&got, p, 0x1000, ".sframe"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := dump(&want, sec, 0x1000, ".sframe"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: the section dumps otherwise:\n%s\nwant\n%s", name, got.String(), want.String())
		}
	}
}

func TestAppendErrors(t *testing.T) {
	sec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	fdes := functionsOf(t, sec)
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
	p := &Section{Header: sec.Header}
	bad := fdes[1]
	bad.FREs = slices.Clone(bad.FREs)
	bad.FREs[0].Info = 0x65
	check("bad FRE", p.AppendFDE(bad), "FDE 0: FRE 0: invalid data-word size code 3")

	p = &Section{Header: sec.Header}
	if err := p.AppendFDE(fdes[0]); err != nil {
		t.Fatal(err)
	}
	p.Index[0].FREOffset = 1000
	_, err = p.Encode()
	check("offset", err, "FRE offset 0x3e8 past the FRE data")
	_, err = p.Func(0)
	check("Func offset", err, "FRE offset 0x3e8 past the FRE data")
	_, err = p.Func(1)
	check("Func index", err, "no FDE 1 (1 FDEs)")

	v1 := &Section{Header: sec.Header}
	v1.Header.Version = Version1
	check("version 1", v1.AppendFDE(fdes[0]), "unsupported version 1")
}

// TestAppendCopy checks that a copied function encodes as if its FREs
// had been appended again with the new size, and the copy's errors.
func TestAppendCopy(t *testing.T) {
	sec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	fdes := functionsOf(t, sec)
	for i, f := range fdes {
		if len(f.FREs) == 0 {
			continue
		}
		last := f.FREs[len(f.FREs)-1].StartAddr
		for _, size := range []uint32{last, last + 1, f.Size + 100} {
			packed := &Section{Header: sec.Header}
			again := &Section{Header: sec.Header}
			for _, g := range []FDE{fdes[0], f} {
				if err := packed.AppendFDE(g); err != nil {
					t.Fatal(err)
				}
				if err := again.AppendFDE(g); err != nil {
					t.Fatal(err)
				}
			}
			if err := packed.AppendCopy(1, size); err != nil {
				t.Fatalf("FDE %d, size %#x: %v", i, size, err)
			}
			g := f
			g.Size, g.StartOffset = size, 0
			if err := again.AppendFDE(g); err != nil {
				t.Fatal(err)
			}
			a, errA := packed.Encode()
			b, errB := again.Encode()
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Errorf("FDE %d, size %#x: copy encodes differently (%v, %v)", i, size, errA, errB)
			}
			if packed.FRECount != again.FRECount {
				t.Errorf("FDE %d: FRECount %d, want %d", i, packed.FRECount, again.FRECount)
			}
		}
		if last > 0 {
			packed := &Section{Header: sec.Header}
			if err := packed.AppendFDE(f); err != nil {
				t.Fatal(err)
			}
			err := packed.AppendCopy(0, last-1)
			if err == nil || !strings.Contains(err.Error(), "past the size") {
				t.Errorf("FDE %d: copy to a size before its last FRE: %v", i, err)
			}
		}
	}
	p := &Section{Header: sec.Header}
	if err := p.AppendCopy(0, 10); err == nil || !strings.Contains(err.Error(), "no FDE 0") {
		t.Errorf("copy from an empty section: %v", err)
	}
}

// appendMin appends a function of FREs fres (their Info says which
// bits to set; their words are written in the smallest size) with a
// MinWriter.
func appendMin(s *Section, f FDE, fres []FRE) error {
	var w MinWriter
	if err := w.Begin(s, &f); err != nil {
		return err
	}
	for _, e := range fres {
		var words [3]int32
		copy(words[:], e.Words)
		w.Add(e.StartAddr, e.BaseRegSP(), e.MangledRA(), len(e.Words), words[0], words[1], words[2])
	}
	return w.End()
}

// TestMinWriter checks that a MinWriter writes what AppendFDE writes
// of the same FREs with the smallest data-word size DataWordSizeFor gives
// their words: at every boundary of the three sizes, with one to three
// words, for each width of start addresses, in both byte orders; words
// past the count are ignored.
func TestMinWriter(t *testing.T) {
	vals := []int32{0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536, math.MaxInt32, math.MinInt32}
	for _, abi := range []ABI{ABIAMD64LittleEndian, ABIS390XBigEndian} {
		for _, size := range []uint32{0x80, 0x1234, 0x123456} {
			ft := FRETypeFor(size)
			var got, want Section
			got.Header = Header{Version: Version3, ABI: abi}
			want.Header = got.Header
			for _, a := range vals {
				f := FDE{Size: size, Info: FuncInfo(PCInc, ft, a < 0, false), Info2: 1, RepSize: 2}
				var w MinWriter
				if err := w.Begin(&got, &f); err != nil {
					t.Fatal(err)
				}
				var ref []FRE
				for _, b := range vals {
					for n := 1; n <= 3; n++ {
						all := [3]int32{a, b, a ^ b}
						if n < 3 {
							all[2] = 1 << 30 // ignored: past n
						}
						words := all[:n]
						ws := DataWord1B
						for _, v := range words {
							s, _ := DataWordSizeFor(int64(v))
							ws = max(ws, s)
						}
						start := uint32(w.Len()) * (size / 200)
						sp, mangled := n != 2, b < 0
						w.Add(start, sp, mangled, n, all[0], all[1], all[2])
						ref = append(ref, FRE{StartAddr: start, Info: FREInfo(sp, n, ws, mangled), Words: slices.Clone(words)})
					}
				}
				if err := w.End(); err != nil {
					t.Fatal(err)
				}
				f.FREs = ref
				if err := want.AppendFDE(f); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got.FREData, want.FREData) {
				t.Errorf("%v, %v: a MinWriter wrote other bytes than AppendFDE", abi, ft)
			}
			if !slices.Equal(got.Index, want.Index) {
				t.Errorf("%v, %v: index %+v, want %+v", abi, ft, got.Index[0], want.Index[0])
			}
			if got.FRECount != want.FRECount {
				t.Errorf("%v, %v: %d FREs counted, want %d", abi, ft, got.FRECount, want.FRECount)
			}
		}
	}
}

// TestMinWriterSmall checks that FREs added with AddSmall where it takes
// them, else with AddSmall2 where it takes them, and with Add where neither
// does, make the bytes Add alone makes: random functions of every FRE type
// in both byte orders, words in and out of a byte and of two, one to three
// of them, long enough for the record to grow. AddSmall and AddSmall2 must
// take only the FREs they are for.
func TestMinWriterSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() int32 {
		switch rng.IntN(4) {
		case 0:
			return int32(rng.IntN(256)) - 128
		case 1:
			return []int32{-129, 128, -128, 127, 0}[rng.IntN(5)]
		case 2:
			return int32(rng.IntN(1<<16)) - 1<<15
		}
		return int32(rng.Uint32())
	}
	for _, abi := range []ABI{ABIAMD64LittleEndian, ABIAArch64LittleEndian, ABIAArch64BigEndian, ABIS390XBigEndian} {
		var got, want Section
		got.Header = Header{Version: Version3, ABI: abi}
		want.Header = got.Header
		small, small2 := 0, 0
		for f := range 300 {
			size := []uint32{0x40, 0xff, 0x100, 0x3000, 0xffff, 0x10000, 0x123456}[f%7]
			fde := FDE{Size: size, Info: FuncInfo(PCInc, FRETypeFor(size), false, false)}
			var g, w MinWriter
			if err := g.Begin(&got, &fde); err != nil {
				t.Fatal(err)
			}
			if err := w.Begin(&want, &fde); err != nil {
				t.Fatal(err)
			}
			for j := range rng.IntN(120) {
				start := uint32(j) * size / 120
				n := 1 + rng.IntN(3)
				w0, w1, w2 := word(), word(), word()
				if n < 3 {
					w2 = 0
				}
				if n < 2 {
					w1 = 0
				}
				sp, mangled := rng.IntN(2) == 0, rng.IntN(2) == 0
				fits := func(v int32) bool { return v >= -128 && v <= 127 }
				fits2 := func(v int32) bool { return v >= -1<<15 && v < 1<<15 }
				short := abi.ByteOrder() == binary.LittleEndian && FRETypeFor(size) != FREAddr4 && n <= 2
				usual := short && fits(w0) && fits(w1)
				usual2 := short && fits2(w0) && fits2(w1) && !usual
				took := g.AddSmall(start, FREInfo(sp, n, DataWord1B, mangled), n, w0, w1)
				if took && !usual {
					t.Fatalf("%v size %#x: AddSmall took n=%d %d %d", abi, size, n, w0, w1)
				}
				took2 := !took && g.AddSmall2(start, FREInfo(sp, n, DataWord2B, mangled), n, w0, w1)
				if took2 && !usual2 {
					t.Fatalf("%v size %#x: AddSmall2 took n=%d %d %d", abi, size, n, w0, w1)
				}
				switch {
				case took:
					small++
				case took2:
					small2++
				default:
					g.Add(start, sp, mangled, n, w0, w1, w2)
				}
				w.Add(start, sp, mangled, n, w0, w1, w2)
			}
			if err := g.End(); err != nil {
				t.Fatal(err)
			}
			if err := w.End(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got.FREData, want.FREData) || !slices.Equal(got.Index, want.Index) || got.FRECount != want.FRECount {
			t.Errorf("%v: AddSmall and Add wrote other bytes than Add", abi)
		}
		if little := abi.ByteOrder() == binary.LittleEndian; little != (small > 1000) || little != (small2 > 300) {
			t.Errorf("%v: AddSmall took %d FREs, AddSmall2 %d", abi, small, small2)
		}
	}
	// AddSmall2 refuses words that each fit a byte (AddSmall's: Add
	// writes them in one byte) and takes those that need two.
	{
		var s Section
		s.Header = Header{Version: Version3, ABI: ABIAMD64LittleEndian}
		var w MinWriter
		if err := w.Begin(&s, &FDE{Size: 0x1000, Info: FuncInfo(PCInc, FREAddr2, false, false)}); err != nil {
			t.Fatal(err)
		}
		info2 := FREInfo(true, 2, DataWord2B, false)
		if w.AddSmall2(0, info2, 2, 8, -16) || w.AddSmall2(0, info2, 2, 127, -128) {
			t.Errorf("AddSmall2 took words that fit a byte")
		}
		if !w.AddSmall2(0, info2, 2, 128, -16) || !w.AddSmall2(4, info2, 2, 8, -129) || !w.AddSmall2(8, info2, 2, 1<<15-1, -1<<15) {
			t.Errorf("AddSmall2 refused words that need two bytes")
		}
		if w.AddSmall2(12, info2, 2, 1<<15, 0) || w.AddSmall2(12, info2, 2, 0, -1<<15-1) {
			t.Errorf("AddSmall2 took a word that needs four bytes")
		}
	}
	// More FREs than an FDE holds, all through AddSmall: End fails.
	{
		var s Section
		s.Header = Header{Version: Version3, ABI: ABIAMD64LittleEndian}
		var w MinWriter
		if err := w.Begin(&s, &FDE{Size: 0x10, Info: FuncInfo(PCInc, FREAddr1, false, false)}); err != nil {
			t.Fatal(err)
		}
		for range MaxFREsPerFDE + 1 {
			if !w.AddSmall(0, FREInfo(true, 1, DataWord1B, false), 1, 8, 0) {
				w.Add(0, true, false, 1, 8, 0, 0)
			}
		}
		if err := w.End(); err == nil || !strings.Contains(err.Error(), "more than 65535 FREs") {
			t.Errorf("%d FREs: End: %v", MaxFREsPerFDE+1, err)
		}
		if len(s.Index) != 0 || len(s.FREData) != 0 {
			t.Errorf("%d FREs: the section changed", MaxFREsPerFDE+1)
		}
	}
	// Not past the function's size or the FRE type, nor after an FRE
	// refused.
	var s Section
	s.Header = Header{Version: Version3, ABI: ABIAMD64LittleEndian}
	for _, size := range []uint32{0x10, 0x100, 0x1000} {
		var w MinWriter
		if err := w.Begin(&s, &FDE{Size: size, Info: FuncInfo(PCInc, FRETypeFor(size), false, false)}); err != nil {
			t.Fatal(err)
		}
		info := FREInfo(true, 1, DataWord1B, false)
		if !w.AddSmall(size, info, 1, 8, 0) {
			t.Errorf("size %#x: AddSmall refused an FRE at the end", size)
		}
		if w.AddSmall(size+1, info, 1, 8, 0) {
			t.Errorf("size %#x: AddSmall took an FRE past the end", size)
		}
		w.Add(size+1, true, false, 1, 8, 0, 0)
		if w.AddSmall(0, info, 1, 8, 0) {
			t.Errorf("size %#x: AddSmall took an FRE after one refused", size)
		}
	}
}

// TestMinWriterErrors checks that a MinWriter refuses what AppendFDE
// refuses, with its error, and leaves the section as it was, also when it
// is dropped without End.
func TestMinWriterErrors(t *testing.T) {
	type fre struct {
		start uint32
		n     int
	}
	info := FuncInfo(PCInc, FREAddr1, false, false)
	v3 := Header{Version: Version3, ABI: ABIAMD64LittleEndian}
	for _, tc := range []struct {
		name string
		hdr  Header
		f    FDE
		fres []fre
		want string
	}{
		{"start past the size", v3, FDE{Size: 0x10, Info: info}, []fre{{4, 1}, {0x11, 1}}, "FRE 1: start address 0x11 past the function size 0x10"},
		{"start past the FRE type", v3, FDE{Size: 0x1000, Info: info}, []fre{{0x100, 1}}, "does not fit"},
		{"no words", v3, FDE{Size: 0x10, Info: info}, []fre{{0, 0}}, "FRE 0 has 0 data words"},
		{"four words", v3, FDE{Size: 0x10, Info: info}, []fre{{0, 1}, {1, 1}, {2, 4}}, "FRE 2 has 4 data words"},
		{"too many FREs", v3, FDE{Size: 0x10, Info: info}, make([]fre, MaxFREsPerFDE+1), "more than 65535 FREs"},
		{"invalid FRE type", v3, FDE{Size: 0x10, Info: 0xf}, []fre{{0, 1}}, "invalid FRE type"},
		{"unknown ABI", Header{Version: Version3, ABI: 9}, FDE{Size: 0x10, Info: info}, []fre{{0, 1}}, "unknown ABI 9"},
		{"version 1", Header{Version: Version1, ABI: ABIAMD64LittleEndian}, FDE{Size: 0x10, Info: info}, []fre{{0, 1}}, "unsupported version 1"},
		{"dropped", v3, FDE{Size: 0x10, Info: info}, []fre{{0, 1}}, ""},
	} {
		s := Section{Header: tc.hdr}
		if tc.hdr.Version == Version3 && tc.hdr.ABI == ABIAMD64LittleEndian {
			// Not empty: what was there must stay.
			if err := appendMin(&s, FDE{Size: 0x10, Info: info}, []FRE{{StartAddr: 4, Info: FREInfo(true, 1, DataWord1B, false), Words: []int32{8}}}); err != nil {
				t.Fatal(err)
			}
		}
		before := s
		before.FREData = slices.Clone(s.FREData)
		var w MinWriter
		err := w.Begin(&s, &tc.f)
		if err == nil {
			for _, e := range tc.fres {
				if tc.fres[0].n == 0 && len(tc.fres) > 1 {
					e.n = 1 // the FREs of "too many FREs"
				}
				w.Add(e.start, true, false, e.n, 8, 16, 24)
			}
			if tc.want != "" {
				err = w.End()
			}
		}
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if !bytes.Equal(s.FREData, before.FREData) || len(s.Index) != len(before.Index) || s.FRECount != before.FRECount {
			t.Errorf("%s: the section changed", tc.name)
		}
	}
}
