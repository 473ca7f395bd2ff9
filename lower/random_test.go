package lower

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// randomABI is what the random CFI generator needs to know of an ABI.
type randomABI struct {
	sp, fp, ra int
	others     []int // other GPRs, the first one a plausible CFA register
	fregs      []int // registers to save FP/RA into
	nop, ret   string
	cfaOffs    []int
	escapes    []string
}

var randomABIs = map[string]randomABI{
	"x86_64": {sp: 7, fp: 6, ra: 16, others: []int{3, 12, 10, 33}, fregs: []int{3, 12, 13},
		nop: "nop", ret: "ret",
		cfaOffs: []int{8, 16, 24, 32, 48, 64, 0, -8, 120, 128, 136, 296, 40000, 0x10000},
		escapes: []string{"0x2e,0", "0x2e,0x10", "0x10,0x6,0x2,0x76,0x78", "0xf,0x3,0x76,0x78,0x6",
			"0x10,0x3,0x2,0x76,0x70", "0x0", "0x0,0x0", "0x16,0x3,0x2,0x70,0x0", "0x10,0x7,0x2,0x77,0x8",
			"0xf,0x3,0x77,0x8,0x6", "0x10,0x6,0x2,0x73,0x10", "0xf,0x3,0x76,0x88,0x6", "0x10,0x10,0x2,0x77,0x8"}},
	"aarch64": {sp: 31, fp: 29, ra: 30, others: []int{19, 20, 9}, fregs: []int{19, 20},
		nop: "nop", ret: "ret",
		cfaOffs: []int{8, 16, 24, 32, 48, 64, 0, -8, 120, 128, 136, 296, 40000, 0x10000},
		escapes: []string{"0x2e,0", "0x2e,0x10", "0x0", "0x10,0x13,0x2,0x8f,0x10", "0x10,0x1e,0x2,0x8f,0x8",
			"0x10,0x1d,0x2,0x8f,0x10"}},
	"s390x": {sp: 15, fp: 11, ra: 14, others: []int{10, 6, 7}, fregs: []int{16, 17},
		nop: "nopr %r7", ret: "br %r14",
		cfaOffs: []int{160, 168, 176, 320, 2000, 96, -8, 160 + 8*7, 160 + 8*33},
		escapes: []string{"0x2e,0", "0x0", "0x10,0x6,0x2,0x7f,0x10", "0x10,0xe,0x2,0x7f,0x10", "0x10,0xb,0x2,0x7f,0x10"}},
}

// randomCFI writes n functions with random CFI directives that GNU as
// accepts without internal errors (restore_state only right after an
// advance, no empty simple CIE, offsets multiples of 8).
func randomCFI(arch string, seed uint64, n int) string {
	a := randomABIs[arch]
	r := rand.New(rand.NewPCG(seed, 0x5f4a))
	pick := func(v []int) int { return v[r.IntN(len(v))] }
	var b strings.Builder
	b.WriteString("\t.text\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "f%d:\n", i)
		if r.Float64() < 0.05 {
			init := map[string]int{"x86_64": 8, "aarch64": 0, "s390x": 160}[arch]
			fmt.Fprintf(&b, "\t.cfi_startproc simple\n\t.cfi_def_cfa %d, %d\n", a.sp, init)
		} else {
			b.WriteString("\t.cfi_startproc\n")
		}
		if r.Float64() < 0.1 {
			b.WriteString("\t.cfi_signal_frame\n")
		}
		if arch == "aarch64" && r.Float64() < 0.2 {
			b.WriteString("\t.cfi_b_key_frame\n")
		}
		if r.Float64() < 0.005 {
			fmt.Fprintf(&b, "\t.cfi_return_column %d\n", a.others[0])
		}
		depth, afterAdv := 0, true
		for j, m := 0, r.IntN(15); j < m; j++ {
			k := r.Float64()
			saveOff := -8 * (1 + r.IntN(20))
			if r.Float64() < 0.1 {
				saveOff = -8 * (1000 + r.IntN(5000))
			}
			var d string
			switch {
			case k < 0.30:
				b.WriteString("\t" + a.nop + "\n")
				afterAdv = true
				continue
			case k < 0.40:
				d = fmt.Sprintf(".cfi_def_cfa_offset %d", pick(a.cfaOffs))
			case k < 0.45:
				d = fmt.Sprintf(".cfi_def_cfa %d, %d", pick([]int{a.sp, a.fp, a.others[0]}), pick(a.cfaOffs))
			case k < 0.50:
				d = fmt.Sprintf(".cfi_def_cfa_register %d", pick([]int{a.sp, a.fp, a.fp, a.others[0]}))
			case k < 0.62:
				d = fmt.Sprintf(".cfi_offset %d, %d", pick([]int{a.fp, a.ra, a.others[0], a.fp}), saveOff)
			case k < 0.67:
				d = fmt.Sprintf(".cfi_restore %d", pick([]int{a.fp, a.ra, a.others[0]}))
			case k < 0.70:
				d = fmt.Sprintf(".cfi_same_value %d", pick([]int{a.fp, a.ra, a.sp}))
			case k < 0.72:
				d = fmt.Sprintf(".cfi_undefined %d", pick([]int{a.ra, a.ra, a.others[0], a.fp}))
			case k < 0.75:
				d = fmt.Sprintf(".cfi_register %d, %d", pick([]int{a.fp, a.ra, a.others[0]}), pick(a.fregs))
			case k < 0.79:
				d = ".cfi_remember_state"
				depth++
			case k < 0.83:
				if depth == 0 || !afterAdv {
					continue
				}
				d = ".cfi_restore_state"
				depth--
			case k < 0.90:
				if r.Float64() < 0.6 {
					continue
				}
				d = ".cfi_escape " + a.escapes[r.IntN(len(a.escapes))]
			case k < 0.93:
				d = fmt.Sprintf(".cfi_adjust_cfa_offset %d", pick([]int{8, -8, 16}))
			case k < 0.95 && arch != "s390x":
				d = fmt.Sprintf(".cfi_rel_offset %d, %d", a.fp, pick([]int{0, 8, 16}))
			case k < 0.97:
				if r.Float64() < 0.7 {
					continue
				}
				d = fmt.Sprintf(".cfi_val_offset %d, %d", pick([]int{a.others[0], a.sp}), pick([]int{0, -160, 8, -16}))
			default:
				switch {
				case arch == "aarch64":
					d = []string{".cfi_negate_ra_state", ".cfi_window_save"}[r.IntN(2)]
				case r.Float64() < 0.9:
					continue
				default:
					d = ".cfi_window_save"
				}
			}
			b.WriteString("\t" + d + "\n")
			afterAdv = false
		}
		fmt.Fprintf(&b, "\t%s\n\t.cfi_endproc\n", a.ret)
	}
	return b.String()
}

// TestRandomVsGas assembles random CFI with and without --gsframe and
// checks Lower against gas like TestGolden. $LOWER_RANDOM_FILES sets the
// number of files per architecture (default 3, 40 functions each).
func TestRandomVsGas(t *testing.T) {
	files := 3
	if s := os.Getenv("LOWER_RANDOM_FILES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("LOWER_RANDOM_FILES: %v", err)
		}
		files = n
	}
	for _, arch := range []string{"x86_64", "aarch64", "aarch64_be", "s390x"} {
		tool, eb := arch, []string(nil)
		if arch == "aarch64_be" {
			tool, eb = "aarch64", []string{"-EB"}
		}
		as := sysfiles.GNURef.Tool(t, tool, "as")
		dir := t.TempDir()
		compared := 0
		for i := 0; i < files; i++ {
			seed := uint64(i + 1)
			name := fmt.Sprintf("r%d", seed)
			t.Run(arch+"/"+name, func(t *testing.T) {
				src := randomCFI(strings.TrimSuffix(arch, "_be"), seed, 40)
				if err := os.WriteFile(filepath.Join(dir, name+".s"), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				run(t, dir, as, append(eb, "-o", name+".o", name+".s")...)
				cmd := exec.Command(as, append(eb, "--gsframe", "-o", name+".gs.o", name+".s")...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil || strings.Contains(string(out), "Error") {
					t.Skipf("gas could not assemble the random input: %v\n%s", err, out)
				}
				if err := os.WriteFile(filepath.Join(dir, name+".gs.warnings"), out, 0o644); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, filepath.Join(dir, name+".o"))
				compared++
			})
		}
		// gas may refuse one random file, not all of them.
		if files > 0 && compared == 0 {
			t.Errorf("%s: gas --gsframe assembled none of the %d random files", arch, files)
		}
	}
}
