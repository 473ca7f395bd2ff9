package lower

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

func TestInRanges(t *testing.T) {
	rs := []addrRange{{0x1000, 0x2000}, {0x5000, 0x5010}}
	tests := []struct {
		start, size uint64
		want        bool
	}{
		{0x1000, 0x1000, true},
		{0x1ff0, 0x10, true},
		{0x1ff0, 0x11, false},
		{0x2000, 0, true}, // an empty function at the very end
		{0x0fff, 1, false},
		{0x5000, 0x10, true},
		{0x3000, 1, false},
		{0x1000, ^uint64(0), false},
		{^uint64(0), 2, false},
	}
	for _, tc := range tests {
		if got := inRanges(rs, tc.start, tc.size); got != tc.want {
			t.Errorf("inRanges(%#x, %#x) = %v, want %v", tc.start, tc.size, got, tc.want)
		}
	}
}

// TestLowerFileOutsideCode clears PF_X on the text segment of a linked file:
// every function must then be skipped with the reason, none emitted.
func TestLowerFileOutsideCode(t *testing.T) {
	path := filepath.Join("..", "testdata", "link", "x86_64", "pie.exe")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lowerIt := func(data []byte) (*Result, int) {
		res, frames := lowerELFBytes(t, data)
		return res, len(frames.FDEs)
	}
	res, _ := lowerIt(data)
	for _, s := range res.Skipped {
		if strings.Contains(s.Reason, "outside every executable segment") {
			t.Errorf("intact file: %s", s.Reason)
		}
	}
	if res.Section.NumFDEs() == 0 {
		t.Fatal("intact file: no FDE")
	}

	phoff := binary.LittleEndian.Uint64(data[0x20:])
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), data...)
	cleared := 0
	for i, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			off := phoff + uint64(i)*56 + 4 // p_flags
			binary.LittleEndian.PutUint32(damaged[off:], uint32(p.Flags&^elf.PF_X))
			cleared++
		}
	}
	if cleared == 0 {
		t.Fatal("no executable PT_LOAD in the test input")
	}
	res, n := lowerIt(damaged)
	outside := 0
	for _, s := range res.Skipped {
		if strings.Contains(s.Reason, "outside every executable segment") {
			outside++
		}
	}
	if outside == 0 || outside > n {
		t.Errorf("%d of %d FDEs skipped as outside code", outside, n)
	}
	for i, src := range res.Sources {
		if src != nil { // only ld's PLT FDEs (no CFI source) may remain
			t.Errorf("FDE %d from CFI at %#x kept though no segment is executable", i, src.Start)
		}
	}
	for i := 1; i < len(res.Skipped); i++ {
		if res.Skipped[i-1].FDE.Offset > res.Skipped[i].FDE.Offset {
			t.Errorf("Skipped not in CFI order at %d", i)
		}
	}
}

// TestLowerFileOutsideSection shrinks .text in an object: the functions it
// no longer holds are skipped with the reason, the others kept.
func TestLowerFileOutsideSection(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "gas", "x86_64", "basic.o"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	text := -1
	for i, s := range f.Sections {
		if s.Name == ".text" {
			text = i
		}
	}
	if text < 0 || f.Sections[text].Size < 2 {
		t.Fatal("no .text in the test input")
	}
	shoff := binary.LittleEndian.Uint64(data[0x28:])
	damaged := append([]byte(nil), data...)
	binary.LittleEndian.PutUint64(damaged[shoff+uint64(text)*64+32:], 1) // sh_size
	lower := func(data []byte) *Result {
		res, _ := lowerELFBytes(t, data)
		return res
	}
	intact, broken := lower(data), lower(damaged)
	skipped := 0
	for _, s := range broken.Skipped {
		if strings.Contains(s.Reason, "is outside its section") {
			skipped++
		}
	}
	for _, s := range intact.Skipped {
		if strings.Contains(s.Reason, "outside its section") {
			t.Errorf("intact object: %s", s.Reason)
		}
	}
	if skipped == 0 || broken.Section.NumFDEs()+skipped != intact.Section.NumFDEs() {
		t.Errorf("intact: %d FDEs; shrunk .text: %d FDEs, %d skipped as outside", intact.Section.NumFDEs(), broken.Section.NumFDEs(), skipped)
	}
}

// lowerELFBytes reads the ELF file data and lowers it with LowerFile in the
// default mode.
func lowerELFBytes(t *testing.T, data []byte) (*Result, *cfi.Frames) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := TargetForELF(f)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := LowerFile(f, frames, tg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res, frames
}

// TestFilterPLT checks that the filter of a linked file leaves out exactly
// the FDEs inPLTSections places in a PLT section, its quick check of the span of
// the sections included: sections apart, one of size 0, one that ends at
// 2^64, at their first and last addresses and around them.
func TestFilterPLT(t *testing.T) {
	for _, plt := range [][]PLTSection{
		nil,
		{{Addr: 0x1000, Size: 0x100}},
		{{Addr: 0x1000, Size: 0x100}, {Addr: 0x5000, Size: 0x10}, {Addr: 0x3000, Size: 0}},
		{{Addr: math.MaxUint64 - 0xf, Size: 0x10}, {Addr: 0x2000, Size: 0x20}},
		{{Addr: math.MaxUint64 - 0xf, Size: 0x40}},
	} {
		ff := fileFilter(&elf.File{}, Target{}, plt)
		ff.code = []addrRange{{0, math.MaxUint64}} // every address in code
		var addrs []uint64
		for _, s := range plt {
			for _, d := range []uint64{0, 1, s.Size - 1, s.Size, s.Size + 1} {
				addrs = append(addrs, s.Addr+d, s.Addr-d)
			}
		}
		addrs = append(addrs, 0, 1, 0x1800, math.MaxUint64)
		for _, a := range addrs {
			_, lower := ff.keep(&cfi.FDE{Start: a, Size: 0})
			if lower == inPLTSections(plt, a) {
				t.Errorf("PLT %+v, FDE at %#x: lowered %v, in the PLT %v", plt, a, lower, inPLTSections(plt, a))
			}
		}
	}
}
