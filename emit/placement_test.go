package emit

import (
	"bytes"
	"cmp"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPlacementErrors checks that EncodeParts with a Placement refuses what it cannot
// write: an unpacked section, an order or starts of another length, an
// order that is not a permutation, one that does not sort the functions
// (ErrNotSorted).
func TestPlacementErrors(t *testing.T) {
	var s Section
	s.Header = Header{Version: Version3, ABI: ABIAMD64LittleEndian}
	for range 3 {
		if err := appendMin(&s, FDE{Size: 0x10, Info: FuncInfo(PCInc, FREAddr1, false, false)}, []FRE{{Info: FREInfo(true, 1, DataWord1B, false), Words: []int32{8}}}); err != nil {
			t.Fatal(err)
		}
	}
	starts := []uint64{0x3000, 0x1000, 0x2000}
	for _, tc := range []struct {
		order  []int
		starts []uint64
		want   string
	}{
		{[]int{1, 2}, starts, "an order of 2"},
		{[]int{1, 2, 0}, starts[:2], "2 starts"},
		{[]int{1, 1, 0}, starts, "not a permutation"},
		{[]int{1, 3, 0}, starts, "not a permutation"},
		{[]int{-1, 2, 0}, starts, "not a permutation"},
		{[]int{2, 1, 0}, starts, "FDE 1 (start 0x1000) after FDE 2 (start 0x2000)"},
		{nil, starts, "FDE 1 (start 0x1000) after FDE 0 (start 0x3000)"},
		{[]int{0, 2, 1}, []uint64{0x1000, 0x2000, 0x2000}, "FDE 1 (start 0x2000) after FDE 2 (start 0x2000)"},
	} {
		_, err := s.EncodeParts(&Placement{Order: tc.order, Starts: tc.starts})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("order %v, %d starts: error %v, want %q", tc.order, len(tc.starts), err, tc.want)
		}
		if sorting := strings.Contains(tc.want, "after"); errors.Is(err, ErrNotSorted) != sorting {
			t.Errorf("order %v, %d starts: error %v is ErrNotSorted: %v", tc.order, len(tc.starts), err, !sorting)
		}
	}
	for _, tc := range []struct {
		order  []int
		starts []uint64
		addr   uint64
	}{
		{[]int{1, 2, 0}, starts, 0},
		{nil, []uint64{0x1000, 0x1000, 0x1004}, 0},
		{[]int{0, 1, 2}, starts, 0x2000}, // 0x3000 at +0x1000; 0x1000 at -0x1000
		{[]int{0, 1, 2}, starts, 0x2800},
		{[]int{2, 0, 1}, starts, 0x2000 + 1<<63}, // signed offsets: 0x3000 above the rest
	} {
		if tc.addr == 0x2000 || tc.addr == 0x2800 {
			tc.order = []int{1, 2, 0}
		}
		if _, err := s.EncodeParts(&Placement{Order: tc.order, Starts: tc.starts, Addr: tc.addr}); err != nil {
			t.Errorf("order %v of %#x, section at %#x: %v", tc.order, tc.starts, tc.addr, err)
		}
	}
	// An entry's FRE offset past the FRE data, in any order (nil too).
	s.Index[2].FREOffset = uint32(len(s.FREData))
	for _, tc := range []struct {
		order  []int
		starts []uint64
	}{{[]int{1, 2, 0}, starts}, {[]int{2, 0, 1}, []uint64{0x2000, 0x3000, 0x1000}}, {nil, []uint64{1, 2, 3}}} {
		order := tc.order
		_, err := s.EncodeParts(&Placement{Order: order, Starts: tc.starts})
		if want := "FDE 2: FRE offset 0x"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("order %v, an FRE offset past the data: error %v, want %q", order, err, want)
		}
	}
	v2 := s
	v2.Header.Version = Version2
	if _, err := v2.EncodeParts(&Placement{Order: []int{0, 1, 2}, Starts: starts}); err == nil {
		t.Error("a version 2 section: no error")
	}
}

// TestPlacementBig checks EncodeParts with a Placement, with and without Head, on a big
// index in a random order, in both byte orders and with and without
// PC-relative start fields, against the section reordered by hand and
// encoded.
func TestPlacementBig(t *testing.T) {
	n := 40000
	rng := rand.New(rand.NewPCG(1, 2))
	for _, abi := range []ABI{ABIAMD64LittleEndian, ABIS390XBigEndian} {
		for _, flags := range []Flags{0, FlagFDEFuncStartPCRel} {
			var s Section
			s.Header = Header{Version: Version3, ABI: abi, Flags: flags}
			starts := make([]uint64, n)
			for i := range n {
				f := FDE{Size: uint32(16 + i%200), Info: FuncInfo(PCInc, FREAddr1, false, false)}
				if err := appendMin(&s, f, []FRE{{Info: FREInfo(true, 1, DataWord4B, false), Words: []int32{int32(8 * (i % 50))}}}); err != nil {
					t.Fatal(err)
				}
				starts[i] = 0x400000 + rng.Uint64N(1<<24)
			}
			// The order that sorts the random starts (stable).
			order := make([]int, n)
			for i := range order {
				order[i] = i
			}
			const addr = 0x300000
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(int64(starts[a]-addr), int64(starts[b]-addr)) })
			got, err := s.EncodeParts(&Placement{Order: order, Starts: starts, Addr: addr})
			if err != nil {
				t.Fatal(err)
			}
			ref := Section{Header: s.Header, FREData: s.FREData, FRECount: s.FRECount, Index: make([]IndexEntry, n)}
			ref.Header.Flags |= FlagFDESorted
			for j, i := range order {
				ref.Index[j] = s.Index[i]
				ref.SetFuncStart(j, starts[i], addr)
			}
			want, err := ref.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.Join(got, nil), want) {
				t.Errorf("%v, flags %#x: the placed encoding differs from the reordered section", abi, flags)
			}
			// In memory of the caller's, whatever it holds; in memory
			// of its own when that is too small.
			for _, room := range []int{s.FREDataOffset(), s.FREDataOffset() - 1} {
				head := bytes.Repeat([]byte{0xa5}, room)
				in, err := s.EncodeParts(&Placement{Order: order, Starts: starts, Addr: addr, Head: head})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(bytes.Join(in, nil), want) {
					t.Errorf("%v, flags %#x: a Placement with a Head of %d bytes of room differs", abi, flags, room)
				}
				if used := &in[0][0] == &head[0]; used != (room >= s.FREDataOffset()) {
					t.Errorf("%v, flags %#x: %d bytes of room for %d: used %v", abi, flags, room, s.FREDataOffset(), used)
				}
			}
		}
	}
}

// TestPlacementHalves checks the errors of an index big enough to be
// written in two halves at once: an FDE twice, once in each half; FDEs
// out of order across the halves or in the second, or out of range; an
// FRE offset past the data in the second half; and that the first half's
// error is the one given when both have one.
func TestPlacementHalves(t *testing.T) {
	n := parallelIndex + 10
	var s Section
	s.Header = Header{Version: Version3, ABI: ABIAMD64LittleEndian, Flags: FlagFDEFuncStartPCRel}
	starts := make([]uint64, n)
	for i := range n {
		if err := appendMin(&s, FDE{Size: 0x10, Info: FuncInfo(PCInc, FREAddr1, false, false)}, []FRE{{Info: FREInfo(true, 1, DataWord1B, false), Words: []int32{8}}}); err != nil {
			t.Fatal(err)
		}
		starts[i] = 0x1000 + 0x10*uint64(n-i) // in reverse
	}
	sorted := func() []int {
		order := make([]int, n)
		for j := range order {
			order[j] = n - 1 - j
		}
		return order
	}
	h := n / 2
	for _, tc := range []struct {
		what   string
		change func(order []int)
		want   string
	}{
		{"sorted", func([]int) {}, ""},
		{"an FDE at the end of one half and the start of the other", func(o []int) { o[h] = o[h-1] }, "not a permutation of the 32778 FDEs (16389 twice)"},
		{"an FDE in both halves", func(o []int) { o[h+3] = o[h-3] }, "FDE 16391 (start 0x41030) after FDE 16386 (start 0x41080)"},
		{"an FDE out of range in the second half", func(o []int) { o[n-1] = n }, "not a permutation of the 32778 FDEs (32778)"},
		{"two FDEs swapped across the halves", func(o []int) { o[h-1], o[h] = o[h], o[h-1] }, "FDE 16389 (start 0x41050) after FDE 16388 (start 0x41060)"},
		{"two FDEs swapped in the second half", func(o []int) { o[h+5], o[h+6] = o[h+6], o[h+5] }, "FDE 16383 (start 0x410b0) after FDE 16382 (start 0x410c0)"},
		{"both halves wrong", func(o []int) { o[1], o[2] = o[2], o[1]; o[h+5], o[h+6] = o[h+6], o[h+5] }, "FDE 32776 (start 0x1020) after FDE 32775 (start 0x1030)"},
	} {
		order := sorted()
		tc.change(order)
		_, err := s.EncodeParts(&Placement{Order: order, Starts: starts})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.what, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.what, err, tc.want)
		}
	}
	// An FRE offset past the data, in the second half.
	s.Index[10].FREOffset = uint32(len(s.FREData))
	if _, err := s.EncodeParts(&Placement{Order: sorted(), Starts: starts}); err == nil || !strings.Contains(err.Error(), "FDE 10: FRE offset") {
		t.Errorf("an FRE offset past the data in the second half: error %v", err)
	}
}
