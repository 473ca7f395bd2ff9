package lower

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/verify"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// funcKey names a function across files: its section's name in an object
// (indices differ between X.o and X.gs.o), and its start.
type funcKey struct {
	section string
	start   uint64
}

func (k funcKey) String() string {
	if k.section == "" {
		return fmt.Sprintf("%#x", k.start)
	}
	return fmt.Sprintf("%s+%#x", k.section, k.start)
}

// outcome is what one mode made of one CFI function: its FDE (nil when
// skipped) or the skip reason.
type outcome struct {
	src  *cfi.FDE
	fde  *emit.FDE
	skip string
}

// outcomes maps each CFI FDE (by its offset in the CFI section) to what
// res made of it.
func outcomes(res *Result) map[uint64]outcome {
	m := map[uint64]outcome{}
	fdes, err := res.Section.Functions()
	if err != nil {
		panic(err) // a section lower made
	}
	for i, src := range res.Sources {
		if src != nil {
			m[src.Offset] = outcome{src: src, fde: &fdes[i]}
		}
	}
	for _, s := range res.Skipped {
		o := m[s.FDE.Offset]
		o.src, o.skip = s.FDE, s.Reason
		m[s.FDE.Offset] = o
	}
	return m
}

func sameOutcome(a, b outcome) bool {
	if a.skip != b.skip || (a.fde == nil) != (b.fde == nil) {
		return false
	}
	if a.fde == nil {
		return true
	}
	x, y := a.fde, b.fde
	if x.Size != y.Size || x.Info != y.Info || x.Info2 != y.Info2 || x.RepSize != y.RepSize || len(x.FREs) != len(y.FREs) {
		return false
	}
	for i := range x.FREs {
		p, q := &x.FREs[i], &y.FREs[i]
		if p.StartAddr != q.StartAddr || p.Info != q.Info || !slices.Equal(p.Words, q.Words) {
			return false
		}
	}
	return true
}

// lowered is one mode's result for a file, with the file it gives.
type lowered struct {
	res    *Result
	report *verify.Report
}

// lowerAndVerify runs LowerFile on path in the given mode, writes the
// result into a copy of the file (elfpatch) and verifies it.
func lowerAndVerify(t *testing.T, path string, opt Options) lowered {
	t.Helper()
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	f, err := elf.NewFile(in)
	if err != nil {
		t.Fatal(err)
	}
	target, err := TargetForELF(f)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.Auto)
	if errors.Is(err, cfi.ErrNoCFI) {
		return lowered{res: &Result{Section: &emit.Section{}}}
	}
	if err != nil {
		t.Fatalf("cfi.Read: %v", err)
	}
	res, _, err := LowerFile(f, frames, target, opt)
	if err != nil {
		t.Fatal(err)
	}
	st, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var out *elf.File
	if target.Relocatable {
		data, err := res.Section.Encode()
		if err != nil {
			t.Fatal(err)
		}
		relocs := make([]elfpatch.Reloc, len(res.Relocs))
		for i, r := range res.Relocs {
			relocs[i] = elfpatch.Reloc{Offset: r.Offset, Type: r.Type, Section: uint32(r.Section), Addend: r.Addend}
		}
		var buf bytes.Buffer
		if err := elfpatch.PatchObject(in, st.Size(), &buf, data, relocs); err != nil {
			t.Fatal(err)
		}
		if out, err = elf.NewFile(bytes.NewReader(buf.Bytes())); err != nil {
			t.Fatal(err)
		}
	} else {
		if res.Section.NumFDEs() == 0 {
			return lowered{res: res}
		}
		encode := func(addr uint64) ([]byte, error) {
			res.Place(addr)
			return res.Section.Encode()
		}
		probe, err := encode(0)
		if err != nil {
			t.Fatal(err)
		}
		tmp, err := os.Create(filepath.Join(t.TempDir(), filepath.Base(path)))
		if err != nil {
			t.Fatal(err)
		}
		defer tmp.Close()
		if _, err := elfpatch.PatchLinked(in, tmp, len(probe), encode); err != nil {
			t.Fatal(err)
		}
		if out, err = elf.NewFile(tmp); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := verify.File(out, verify.Options{})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return lowered{res: res, report: rep}
}

// wrongFuncs returns the functions verify found a problem in, keyed as
// funcKey (section names from f).
func wrongFuncs(rep *verify.Report, f *elf.File) map[funcKey][]string {
	m := map[funcKey][]string{}
	if rep == nil {
		return m
	}
	for _, p := range rep.Problems {
		if !p.InFunction {
			continue
		}
		k := funcKey{start: p.Func}
		if rep.Relocatable {
			k.section = sectionName(f, p.Section)
		}
		m[k] = append(m[k], p.Msg)
	}
	return m
}

func openELF(t *testing.T, path string) *elf.File {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// checkCorrect lowers path in both modes and checks the default one: its
// output verifies with no problem; every function whose FDE differs from
// the GasCompat one is a function the reference output gets a verify
// problem for, or a zero-size function of a linked file (left out). The
// reference is GNU's twin for objects (X.gs.o), else our GasCompat output
// (for linked files, byte-identical to ld's by TestLinkedX86/S390X; ld's
// own twin is linked from other objects, so its addresses differ). It
// returns how many functions differ.
func checkCorrect(t *testing.T, path, twin string) (differ, total int) {
	t.Helper()
	def := lowerAndVerify(t, path, Options{})
	gas := lowerAndVerify(t, path, Options{GasCompat: true})
	in := openELF(t, path)

	if def.report != nil {
		for _, p := range def.report.Problems {
			t.Errorf("default mode: %s at %#x: %s", p.Kind, p.Addr, p.Msg)
		}
	}
	ref, refFile := gas.report, in
	if twin != "" && in.Type == elf.ET_REL {
		tf := openELF(t, twin)
		if emit.FindSection(tf) != nil {
			r, err := verify.File(tf, verify.Options{})
			if err != nil {
				t.Fatalf("verify %s: %v", twin, err)
			}
			ref, refFile = r, tf
		}
	}
	wrong := wrongFuncs(ref, refFile)

	d, g := outcomes(def.res), outcomes(gas.res)
	relocatable := in.Type == elf.ET_REL
	for off, gout := range g {
		total++
		dout, src := d[off], gout.src
		if sameOutcome(dout, gout) {
			continue
		}
		differ++
		k := funcKey{start: src.Start}
		if relocatable {
			k.section = sectionName(in, src.Section)
		}
		switch {
		case !relocatable && src.Size == 0 && dout.fde == nil && dout.skip == "":
			// left out in linked files
		case gout.skip != "" && dout.fde != nil && dout.skip == "":
			// gas refused the function because of its own reading of
			// the CFI (e.g. "FP without RA on stack" after a
			// DW_CFA_restore it did not apply); ours verifies.
			t.Logf("%v: gas refused it (%s), the default mode represents it", k, gout.skip)
		case wrong[k] == nil:
			t.Errorf("%v: differs from gas (default %s, gas %s), but gas's FDE verifies", k, describe(dout), describe(gout))
		default:
			t.Logf("%v: differs from gas where gas is wrong (%s): default %s", k, wrong[k][0], describe(dout))
		}
	}
	return differ, total
}

func describe(o outcome) string {
	switch {
	case o.fde != nil && o.skip != "":
		return "signal frame without FREs (" + o.skip + ")"
	case o.fde != nil:
		return fmt.Sprintf("FDE with %d FREs", len(o.fde.FREs))
	case o.skip != "":
		return "skipped: " + o.skip
	}
	return "left out"
}

// TestCorrectGolden checks the default mode on every golden pair: only
// functions where gas is wrong differ from gas, and the output verifies.
func TestCorrectGolden(t *testing.T) {
	objs := goldenPairs(t)
	if len(objs) == 0 {
		t.Fatal("no golden pairs")
	}
	differ, total := 0, 0
	for _, o := range objs {
		name := strings.TrimPrefix(strings.TrimSuffix(o, ".o"), "../testdata/")
		t.Run(name, func(t *testing.T) {
			d, n := checkCorrect(t, o, strings.TrimSuffix(o, ".o")+".gs.o")
			if d > 0 {
				t.Logf("%d of %d functions differ from gas", d, n)
			}
			differ += d
			total += n
		})
	}
	t.Logf("%d of %d functions differ from gas (all where gas's SFrame does not mean the CFI)", differ, total)
}

// TestCorrectLinked does the same for the linked golden files and copies
// of the system's python3 and libc.so.6, against our GasCompat output.
func TestCorrectLinked(t *testing.T) {
	var inputs []string
	for _, pat := range []string{"../testdata/link/*/*.so", "../testdata/link/*/*.exe"} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			if !strings.Contains(filepath.Base(p), ".gs.") {
				inputs = append(inputs, p)
			}
		}
	}
	if len(inputs) == 0 {
		t.Fatal("no linked golden files")
	}
	for _, in := range inputs {
		t.Run(strings.TrimPrefix(in, "../testdata/"), func(t *testing.T) {
			ext := filepath.Ext(in)
			twin := strings.TrimSuffix(in, ext) + ".gs" + ext
			if _, err := os.Stat(twin); err != nil {
				twin = ""
			}
			d, n := checkCorrect(t, in, twin)
			t.Logf("%d of %d functions differ from GNU", d, n)
		})
	}
	for _, sys := range []struct {
		name string
		find func(t testing.TB) string
	}{
		{"python3", func(t testing.TB) string { return sysfiles.PathProgram(t, "python3") }},
		// setcontext: RA at CFA+168 in a flex FDE (gas's word size
		// truncates it).
		{"libc", func(t testing.TB) string { return sysfiles.CompilerLib(t, "gcc", "libc.so.6") }},
	} {
		t.Run(sys.name, func(t *testing.T) {
			path := sys.find(t)
			src, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			cp := filepath.Join(t.TempDir(), filepath.Base(path))
			dst, err := os.Create(cp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(dst, src); err != nil {
				t.Fatal(err)
			}
			dst.Close()
			d, n := checkCorrect(t, cp, "")
			t.Logf("%d of %d functions differ from gas", d, n)
		})
	}
}

// TestRandomCorrect assembles random CFI (as TestRandomVsGas) without
// --gsframe and checks the default mode like TestCorrectGolden: the output
// verifies, and functions differ from the GasCompat output only where
// that one does not verify. $LOWER_RANDOM_FILES sets the number of files
// per architecture (default 3, 40 functions each).
func TestRandomCorrect(t *testing.T) {
	files := 3
	if s := os.Getenv("LOWER_RANDOM_FILES"); s != "" {
		if _, err := fmt.Sscan(s, &files); err != nil {
			t.Fatalf("LOWER_RANDOM_FILES: %v", err)
		}
	}
	differ, total := 0, 0
	for _, arch := range []string{"x86_64", "aarch64", "aarch64_be", "s390x"} {
		tool, eb := arch, []string(nil)
		if arch == "aarch64_be" {
			tool, eb = "aarch64", []string{"-EB"}
		}
		as := sysfiles.GNURef.Tool(t, tool, "as")
		dir := t.TempDir()
		for i := 0; i < files; i++ {
			seed := uint64(1000 + i)
			name := fmt.Sprintf("c%d", seed)
			t.Run(arch+"/"+name, func(t *testing.T) {
				src := randomCFI(strings.TrimSuffix(arch, "_be"), seed, 40)
				if err := os.WriteFile(filepath.Join(dir, name+".s"), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				run(t, dir, as, append(eb, "-o", name+".o", name+".s")...)
				d, n := checkCorrect(t, filepath.Join(dir, name+".o"), "")
				differ += d
				total += n
			})
		}
	}
	t.Logf("%d of %d functions differ from gas", differ, total)
}

// TestZeroSizeLinked: in a linked file the default mode leaves out FDEs of
// size 0 (they describe no address, and share their start with the next
// function, which the kernel refuses); GasCompat keeps them, as ld does,
// and objects keep them in both modes (as gas; the linker's business).
func TestZeroSizeLinked(t *testing.T) {
	f := openELF(t, "../testdata/gas/x86_64/empty.o")
	frames, err := cfi.Read(f, cfi.Auto)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	for _, fde := range frames.FDEs {
		if fde.Size == 0 {
			zero++
		}
	}
	if zero == 0 || zero == len(frames.FDEs) {
		t.Fatalf("empty.o: %d of %d FDEs of size 0; want some but not all", zero, len(frames.FDEs))
	}
	for _, tc := range []struct {
		linked bool
		opt    Options
		want   int
	}{
		{false, Options{}, len(frames.FDEs)},
		{false, Options{GasCompat: true}, len(frames.FDEs)},
		{true, Options{}, len(frames.FDEs) - zero},
		{true, Options{GasCompat: true}, len(frames.FDEs)},
	} {
		fr := *frames
		fr.Relocatable = !tc.linked
		target := Target{Arch: AMD64, Relocatable: !tc.linked}
		res, err := Lower(&fr, target, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Section.NumFDEs(); got != tc.want || len(res.Skipped) != 0 {
			t.Errorf("linked %v, %+v: %d FDEs (%d skipped), want %d", tc.linked, tc.opt, got, len(res.Skipped), tc.want)
		}
	}
}
