package lower

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
)

// unreproducible are gas warnings about directives that leave no trace in
// .eh_frame: the function looks fine from the CFI, so we emit an FDE gas
// did not. The golden comparison drops our FDE for such a function.
var unreproducible = []string{
	"CFI insn CFI_label (0x106)",
}

// ambiguous maps gas warnings about .cfi_escape 0x14 data to the warning
// for the .cfi_val_offset directive that produces the same bytes: the two
// cannot be told apart in .eh_frame, and Lower reads them as the directive.
// The function is dropped either way.
var ambiguous = map[string]string{
	".cfi_escape DW_CFA_val_offset with FP reg 6": ".cfi_val_offset with FP reg 6",
	".cfi_escape with op (0x14)":                  ".cfi_val_offset with SP reg 7",
}

// goldenPairs returns the <name>.o files of testdata/gas/<arch>/ and
// testdata/cc/<arch>/<variant>/ that have a <name>.gs.o twin, plus those in
// the directories of $LOWER_EXTRA_GOLDEN (colon-separated).
func goldenPairs(t testing.TB) []string {
	var dirs []string
	for _, pat := range []string{"../testdata/gas/*", "../testdata/cc/*/*"} {
		m, _ := filepath.Glob(pat)
		dirs = append(dirs, m...)
	}
	if extra := os.Getenv("LOWER_EXTRA_GOLDEN"); extra != "" {
		dirs = append(dirs, filepath.SplitList(extra)...)
	}
	var objs []string
	for _, d := range dirs {
		gs, _ := filepath.Glob(filepath.Join(d, "*.gs.o"))
		for _, g := range gs {
			o := strings.TrimSuffix(g, ".gs.o") + ".o"
			if _, err := os.Stat(o); err == nil {
				objs = append(objs, o)
			}
		}
	}
	sort.Strings(objs)
	return objs
}

func TestGolden(t *testing.T) {
	objs := goldenPairs(t)
	if len(objs) == 0 {
		t.Fatal("no golden pairs (<name>.o + <name>.gs.o) under testdata/gas or testdata/cc")
	}
	for _, o := range objs {
		name := strings.TrimPrefix(strings.TrimSuffix(o, ".o"), "../testdata/")
		t.Run(name, func(t *testing.T) { checkGolden(t, o) })
	}
}

// gasOutput is what as --gsframe produced for one object.
type gasOutput struct {
	sframe    []byte // nil: no .sframe section
	relocs    []Reloc
	relocSecs []string // the relocations' section names (indexes differ from the .o's)
	warnings  []string
}

func readGas(t *testing.T, obj string) gasOutput {
	base := strings.TrimSuffix(obj, ".o")
	f, err := elf.Open(base + ".gs.o")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var g gasOutput
	if s := f.Section(".sframe"); s != nil {
		if g.sframe, err = s.Data(); err != nil {
			t.Fatal(err)
		}
		if g.sframe == nil {
			g.sframe = []byte{}
		}
	}
	if s := f.Section(".rela.sframe"); s != nil {
		data, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p+24 <= len(data); p += 24 {
			off := f.ByteOrder.Uint64(data[p:])
			info := f.ByteOrder.Uint64(data[p+8:])
			add := int64(f.ByteOrder.Uint64(data[p+16:]))
			sym := int(info >> 32)
			if sym == 0 || sym > len(syms) {
				t.Fatalf(".rela.sframe: relocation at %#x has symbol %d", off, sym)
			}
			g.relocs = append(g.relocs, Reloc{Offset: off, Type: uint32(info), Section: int(syms[sym-1].Section), Addend: add})
			g.relocSecs = append(g.relocSecs, sectionName(f, int(syms[sym-1].Section)))
		}
	}
	w, err := os.ReadFile(base + ".gs.warnings")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	const marker = "Warning: no SFrame FDE emitted; "
	sc := bufio.NewScanner(bytes.NewReader(w))
	for sc.Scan() {
		if i := strings.Index(sc.Text(), marker); i >= 0 {
			g.warnings = append(g.warnings, sc.Text()[i+len(marker):])
		}
	}
	return g
}

func checkGolden(t *testing.T, obj string) {
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	target, err := TargetForELF(f)
	if err != nil {
		t.Fatal(err)
	}
	gas := readGas(t, obj)
	if f.Section(".eh_frame") == nil && f.Section(".debug_frame") == nil {
		// No .cfi_startproc at all: gas writes no .sframe.
		if gas.sframe != nil {
			t.Errorf("object has no CFI, but gas wrote a %d-byte .sframe", len(gas.sframe))
		}
		return
	}
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		t.Fatalf("cfi.Read: %v", err)
	}
	for _, e := range frames.Errors {
		t.Errorf("cfi: %v", e)
	}
	res, err := Lower(frames, target, Options{GasCompat: true})
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}

	// Warnings, in order.
	var got []string
	for _, s := range res.Skipped {
		got = append(got, s.Reason)
	}
	var want []string
	drop := map[int]bool{} // indexes in gas's warnings we cannot see
	for i, w := range gas.warnings {
		for _, u := range unreproducible {
			if w == u {
				drop[i] = true
			}
		}
		if drop[i] {
			continue
		}
		if alt, ok := ambiguous[w]; ok {
			t.Logf("known divergence: gas warned %q (a .cfi_escape), we say %q", w, alt)
			w = alt
		}
		want = append(want, w)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped functions:\n got: %q\nwant: %q", got, want)
	}
	if len(drop) > 0 {
		dropUnseen(t, f, res, gas)
	}

	if gas.sframe == nil {
		if len(frames.FDEs) != 0 {
			t.Errorf("gas wrote no .sframe, but the object has %d FDEs", len(frames.FDEs))
		}
		return
	}
	enc, err := res.Section.Encode()
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if !bytes.Equal(enc, gas.sframe) {
		t.Errorf(".sframe differs from gas (%d bytes, gas %d)", len(enc), len(gas.sframe))
		explain(t, f, res, gas.sframe)
	}
	compareRelocs(t, f, res.Relocs, gas)
}

// dropUnseen removes from res the FDEs gas did not emit because of a
// directive invisible in .eh_frame: those whose (section, start) has no
// relocation in gas's output.
func dropUnseen(t *testing.T, f *elf.File, res *Result, gas gasOutput) {
	type key struct {
		sec   string
		start int64
	}
	seen := map[key]int{}
	for i, r := range gas.relocs {
		seen[key{gas.relocSecs[i], r.Addend}]++
	}
	old := res.Section
	sec := &emit.Section{Header: old.Header, Trailer: old.Trailer}
	var relocs []Reloc
	var starts []uint64
	for i := range old.Index {
		k := key{sectionName(f, res.Relocs[i].Section), res.Relocs[i].Addend}
		if seen[k] == 0 {
			t.Logf("known divergence: dropping our FDE at %s+%#x (gas saw a directive .eh_frame does not keep)", k.sec, k.start)
			continue
		}
		seen[k]--
		r := res.Relocs[i]
		r.Offset = uint64(emit.HeaderSize + emit.FDEIndexEntrySize*sec.NumFDEs())
		f, err := old.FDE(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := sec.AppendFDE(f); err != nil {
			t.Fatal(err)
		}
		relocs = append(relocs, r)
		starts = append(starts, res.Starts[i])
	}
	res.Section, res.Relocs, res.Starts = sec, relocs, starts
	if res.Section.Header.ABI == emit.ABIS390XBigEndian {
		sec.Trailer = nil
		if n := encodedSize(sec) % 8; n != 0 {
			sec.Trailer = make([]byte, 8-n)
		}
	}
}

// explain reports the first function whose SFrame data differs from gas's,
// with its symbol and both FRE lists in objdump notation.
func explain(t *testing.T, f *elf.File, res *Result, want []byte) {
	ws, err := emit.Decode(want)
	if err != nil {
		t.Errorf("decoding gas's .sframe: %v", err)
		return
	}
	gs := res.Section
	if fmt.Sprint(gs.Header) != fmt.Sprint(ws.Header) {
		t.Errorf("header: got %+v, gas %+v", gs.Header, ws.Header)
	}
	gf, errG := gs.Functions()
	wf, errW := ws.Functions()
	if errG != nil || errW != nil {
		t.Errorf("reading the functions: %v, gas's: %v", errG, errW)
		return
	}
	if len(gf) != len(wf) {
		t.Errorf("%d FDEs, gas has %d", len(gf), len(wf))
	}
	for i := 0; i < len(gf) && i < len(wf); i++ {
		g, w := gf[i], wf[i]
		g.FREOffset, w.FREOffset = 0, 0
		if fmt.Sprint(g) == fmt.Sprint(w) {
			continue
		}
		start, secIdx := res.Starts[i], 0
		if i < len(res.Relocs) {
			secIdx = res.Relocs[i].Section
		}
		t.Errorf("function %d (%s, start %#x, size %#x) differs; first differing FRE %d\n--- got:\n%s--- gas:\n%s",
			i, symbolAt(f, secIdx, start), start, g.Size, firstDiff(g, w), dumpOne(gs.Header, g, start), dumpOne(ws.Header, w, start))
		return
	}
	if !bytes.Equal(gs.Trailer, ws.Trailer) {
		t.Errorf("trailer: got % x, gas % x", gs.Trailer, ws.Trailer)
	}
}

func firstDiff(g, w emit.FDE) int {
	for j := 0; j < len(g.FREs) && j < len(w.FREs); j++ {
		if fmt.Sprint(g.FREs[j]) != fmt.Sprint(w.FREs[j]) {
			return j
		}
	}
	if len(g.FREs) != len(w.FREs) {
		return min(len(g.FREs), len(w.FREs))
	}
	return -1 // the attribute record differs
}

// dumpOne prints one function as objdump --sframe would, at address start.
func dumpOne(h emit.Header, f emit.FDE, start uint64) string {
	var b bytes.Buffer
	h.Flags &^= emit.FlagFDEFuncStartPCRel
	f.StartOffset = int64(start)
	sec, err := emit.NewSection(h, []emit.FDE{f})
	if err == nil {
		err = emit.Dump(&b, sec, 0, ".sframe")
	}
	if err != nil {
		fmt.Fprintf(&b, "dump: %v\n", err)
	}
	fmt.Fprintf(&b, "info %#02x info2 %#02x\n", f.Info, f.Info2)
	for _, e := range f.FREs {
		fmt.Fprintf(&b, "  fre %#x info %#02x words %v\n", e.StartAddr, e.Info, e.Words)
	}
	return b.String()
}

// symbolAt names the symbol at value start in section sec, if any.
func symbolAt(f *elf.File, sec int, start uint64) string {
	syms, err := f.Symbols()
	if err != nil {
		return "?"
	}
	for _, s := range syms {
		if s.Value == start && s.Name != "" && elf.ST_TYPE(s.Info) != elf.STT_SECTION &&
			(sec == 0 || int(s.Section) == sec) {
			return s.Name
		}
	}
	return "no symbol"
}

// compareRelocs compares relocations, naming target sections: gas's object
// has two more sections, so indexes after .sframe differ from the .o's.
func compareRelocs(t *testing.T, f *elf.File, got []Reloc, gas gasOutput) {
	want := gas.relocs
	if len(got) != len(want) {
		t.Errorf("%d relocations, gas has %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := got[i], want[i]
		gn, wn := sectionName(f, g.Section), gas.relocSecs[i]
		g.Section, w.Section = 0, 0
		if g != w || gn != wn {
			t.Errorf("relocation %d: got %+v against %s, gas %+v against %s", i, got[i], gn, want[i], wn)
			return
		}
	}
}

func sectionName(f *elf.File, i int) string {
	if i <= 0 || i >= len(f.Sections) {
		return fmt.Sprintf("section %d", i)
	}
	return f.Sections[i].Name
}
