package verify

import (
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// goldenFiles returns the GNU-made files of testdata with an .sframe
// section; it fails the test when there are none.
func goldenFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{
		"../../testdata/gas/*/*.gs.o",
		"../../testdata/cc/*/*/*.gs.o",
		"../../testdata/link/*/*.gs.o",
		"../../testdata/link/*/*.gs.so",
		"../../testdata/link/*/*.gs.exe",
		"../../testdata/sample/*.gs",
	} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) < 50 {
		t.Fatalf("found only %d golden files with SFrame", len(files))
	}
	return files
}

func checkFile(t *testing.T, path string) *Report {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := File(f, Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

func describe(r *Report) string {
	var b strings.Builder
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "  %s fde %d func %#x addr %#x-%#x: %s\n", p.Kind, p.FDE, p.Func, p.Addr, p.End, p.Msg)
	}
	return b.String()
}

// knownGNU lists, per golden file, the findings verify makes on what GNU as
// and ld wrote: each is a known GNU quirk that makes SFrame differ from the
// CFI (docs/lower.md keeps them for byte compatibility), so verify must
// report it. The form is "kind +OFFSET: message", OFFSET from the
// function's start.
var knownGNU = map[string][]string{
	// .cfi_def_cfa_register takes the offset of the last committed FRE
	"gas/x86_64/quirks.gs.o": {"mismatch +0x1: CFA: SFrame says fp+8, CFI says fp+16"},
	// gas keeps one remembered state: the second restore_state of a
	// nested pair restores the inner one
	"gas/x86_64/remember.gs.o": {"mismatch +0xc: CFA: SFrame says sp+24, CFI says sp+16"},
	// .cfi_restore goes back to the first committed FRE, not the CIE
	"gas/x86_64/restore.gs.o": {"mismatch +0x2: FP: SFrame says *(CFA-24), CFI says unchanged (no rule)"},
	// RA undefined is sticky on x86-64: a later .cfi_offset rip does not
	// clear it
	"gas/x86_64/undefined.gs.o": {"mismatch +0x4: RA: SFrame says undefined (outermost frame), CFI says *(CFA-8)"},
	"gas/aarch64/quirks.gs.o": {
		"mismatch +0x4: CFA: SFrame says fp+0, CFI says fp+16",
		"mismatch +0x8: RA: SFrame says *(CFA-8), CFI says unchanged (no rule)",
	},
	// DW_CFA_expression x29 gives an FP rule on register 0x1fffffff
	"gas/aarch64/warnings.gs.o": {"mismatch +0x4: FP: SFrame says *(r536870911+16), CFI says *(sp+16)"},
	// s390x CFA offsets are stored divided by 8, truncated
	"gas/s390x/dataword.gs.o": {
		"mismatch +0x1c: CFA: SFrame says sp+160, CFI says sp+164",
		"mismatch +0x1e: CFA: SFrame says sp+152, CFI says sp+150",
	},
	"gas/s390x/quirks.gs.o": {"mismatch +0x2: CFA: SFrame says fp+160, CFI says fp+320"},
	// offsets beyond 32 bits are truncated
	"gas/s390x/warnings.gs.o": {
		"mismatch +0x2: CFA: SFrame says sp+0, CFI says sp+17179869184",
		"mismatch +0x2: CFA: SFrame says sp+0, CFI says sp+17179869184",
	},
	// the gas quirks above, linked; ld also keeps the FDE of an empty
	// function at the same address as the next one (the kernel rejects
	// duplicate starts)
	"link/x86_64/gasmix.gs.so": {
		"consumer +0x0: FDE 42 starts at 0x1459, not after FDE 41 at 0x1459: FDE starts must be strictly increasing",
		"mismatch +0x4: RA: SFrame says undefined (outermost frame), CFI says *(CFA-8)",
		"mismatch +0xc: CFA: SFrame says sp+24, CFI says sp+16",
		"mismatch +0x1: CFA: SFrame says fp+8, CFI says fp+16",
		"mismatch +0x2: FP: SFrame says *(CFA-24), CFI says unchanged (no rule)",
	},
	"link/aarch64/gasmix.gs.so": {
		"consumer +0x0: FDE 26 starts at 0x60c, not after FDE 25 at 0x60c: FDE starts must be strictly increasing",
		"mismatch +0x4: CFA: SFrame says fp+0, CFI says fp+16",
		"mismatch +0x8: RA: SFrame says *(CFA-8), CFI says unchanged (no rule)",
	},
	"link/s390x/gasmix.gs.so": {
		"consumer +0x0: FDE 25 starts at 0x58c, not after FDE 24 at 0x58c: FDE starts must be strictly increasing",
		"mismatch +0x1c: CFA: SFrame says sp+160, CFI says sp+164",
		"mismatch +0x1e: CFA: SFrame says sp+152, CFI says sp+150",
		"mismatch +0x2: CFA: SFrame says fp+160, CFI says fp+320",
	},
}

// problemKeys renders the problems of r in knownGNU's form, sorted.
func problemKeys(r *Report) []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, fmt.Sprintf("%s +%#x: %s", p.Kind, p.Addr-p.Func, p.Msg))
	}
	sort.Strings(out)
	return out
}

// TestGolden checks every section GNU as and ld made in testdata: no
// problem but the known GNU quirks, and every function compared.
func TestGolden(t *testing.T) {
	seen := map[string]bool{}
	functions, addresses := 0, uint64(0)
	for _, path := range goldenFiles(t) {
		key := strings.TrimPrefix(filepath.ToSlash(path), "../../testdata/")
		t.Run(key, func(t *testing.T) {
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := File(f, Options{})
			if errors.Is(err, emit.ErrNoSFrame) {
				return // gas makes no .sframe without CFI
			}
			if err != nil {
				t.Fatal(err)
			}
			functions += r.Functions
			addresses += r.Addresses
			want := append([]string(nil), knownGNU[key]...)
			sort.Strings(want)
			seen[key] = true
			if got := problemKeys(r); !slices.Equal(got, want) {
				t.Errorf("problems:\n  got  %q\n  want %q", got, want)
			}
			for _, n := range r.Notes {
				if strings.HasPrefix(n.Msg, "CFI entry not compared") {
					t.Errorf("note: %s", n.Msg)
				}
			}
		})
	}
	for k := range knownGNU {
		if !seen[k] {
			t.Errorf("%s: listed in knownGNU but not checked", k)
		}
	}
	if functions < 500 || addresses == 0 {
		t.Errorf("only %d functions (%d addresses) checked", functions, addresses)
	}
	t.Logf("%d functions, %d addresses checked", functions, addresses)
}
