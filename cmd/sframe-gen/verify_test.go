package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit/verify"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// verifyReport runs "verify --json" on path.
func verifyReport(t *testing.T, path string) (verify.ReportJSON, int) {
	t.Helper()
	out, errOut, status := runCLI("verify", "--json", path)
	var v verify.ReportJSON
	if status == exitUsage {
		return v, status
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("verify --json %s: %v\n%s%s", path, err, out, errOut)
	}
	return v, status
}

// problemSet renders the problems as "kind +OFFSET: message" (offset from
// the function start), sorted, leaving out the rules only GNU ld breaks
// (an empty function's FDE at the same address as the next one).
func problemSet(v verify.ReportJSON) []string {
	var out []string
	for _, p := range v.Problems {
		if strings.Contains(p.Message, "FDE starts must be strictly increasing") {
			continue
		}
		off := uint64(0)
		if p.Addr != nil && p.Start != nil {
			off = *p.Addr - *p.Start
		}
		out = append(out, fmt.Sprintf("%s +%#x: %s", p.Kind, off, p.Message))
	}
	sort.Strings(out)
	return out
}

// gnuTwin is the file GNU made from the same input as path (X.o →
// X.gs.o, X.so → X.gs.so, X.exe → X.gs.exe, X → X.gs), "" if none.
func gnuTwin(path string) string {
	for _, ext := range []string{".o", ".so", ".exe"} {
		if strings.HasSuffix(path, ext) {
			p := strings.TrimSuffix(path, ext) + ".gs" + ext
			if _, err := os.Stat(p); err == nil {
				return p
			}
			return ""
		}
	}
	if _, err := os.Stat(path + ".gs"); err == nil {
		return path + ".gs"
	}
	return ""
}

// TestVerifyGenerated generates SFrame for every input made without it and
// verifies the result: in the default mode there must be no problem at
// all; with --gas-compat the findings must be exactly those verify makes on
// GNU's section for the same input (the gas quirks lower reproduces), and
// none where GNU has none.
func TestVerifyGenerated(t *testing.T) {
	t.Run("default", func(t *testing.T) { verifyGenerated(t, false) })
	t.Run("gas-compat", func(t *testing.T) { verifyGenerated(t, true) })
}

func verifyGenerated(t *testing.T, compat bool) {
	var inputs []string
	for _, pat := range []string{"gas/*/*.o", "cc/*/*/*.o", "link/*/*.o", "link/*/*.so", "link/*/*.exe", "sample/hello-x86_64"} {
		m, _ := filepath.Glob(filepath.Join(testdataDir(), pat))
		for _, p := range m {
			if !strings.Contains(filepath.Base(p), ".gs") {
				inputs = append(inputs, p)
			}
		}
	}
	if len(inputs) < 50 {
		t.Fatalf("found %d inputs under %s", len(inputs), testdataDir())
	}
	dir := t.TempDir()
	checked, functions := 0, 0
	for i, in := range inputs {
		out := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(in)))
		args := []string{"-o", out, in}
		if compat {
			args = append([]string{"--gas-compat"}, args...)
		}
		if _, errOut, status := runCLI(args...); status != exitOK {
			t.Errorf("generate %s: status %d: %s", in, status, errOut)
			continue
		}
		v, status := verifyReport(t, out)
		if status == exitUsage {
			// no .sframe written: an input without CFI
			if twin := gnuTwin(in); twin != "" {
				if _, st := verifyReport(t, twin); st != exitUsage {
					t.Errorf("%s: no .sframe generated, GNU made one", in)
				}
			}
			continue
		}
		checked++
		functions += v.Functions
		got := problemSet(v)
		var want []string
		if twin := gnuTwin(in); twin != "" && compat {
			g, _ := verifyReport(t, twin)
			want = problemSet(g)
		}
		if !compat {
			for _, p := range v.Problems {
				t.Errorf("%s: default mode: %s", in, p.Line)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: verify findings differ from GNU's:\n  ours %q\n  GNU  %q", in, got, want)
		}
		if (status == exitOK) != (len(v.Problems) == 0) {
			t.Errorf("%s: status %d with %d problems", in, status, len(v.Problems))
		}
	}
	if checked < 50 || functions < 1000 {
		t.Fatalf("only %d outputs (%d functions) verified", checked, functions)
	}
	t.Logf("%d generated files, %d functions verified", checked, functions)
}

func TestVerifyCLI(t *testing.T) {
	td := testdataDir()
	clean := filepath.Join(td, "link/x86_64/lazy.gs.so")
	bad := filepath.Join(td, "gas/x86_64/remember.gs.o")
	tests := []struct {
		name   string
		args   []string
		status int
		stdout []string // substrings
		stderr string
	}{
		{"clean", []string{"verify", clean}, exitOK, []string{
			"sframe-gen: " + clean + ": note: function at .plt.got@0x1090: CFA: SFrame says sp+16, CFI says sp+8",
			"sframe-gen: " + clean + ": 11 functions checked, 1569 addresses covered, 0 problems (2 notes; 0 of 10 CFI functions not covered by SFrame)\n",
		}, ""},
		{"problem", []string{"verify", bad}, exitFailure, []string{
			"sframe-gen: " + bad + ": nested@0x19: CFA: SFrame says sp+24, CFI says sp+16\n",
			", 1 problem (",
		}, ""},
		{"verbose lists uncovered", []string{"verify", "-v", filepath.Join(td, "link/aarch64/gasmix.gs.so")}, exitFailure, []string{
			": fp_no_ra: not covered by SFrame: CFI describes [0x594, 0x5a0)\n",
		}, ""},
		{"json", []string{"verify", "--json", bad}, exitFailure, []string{`"kind": "mismatch"`, `"function": "nested"`, `"ok": false`}, ""},
		{"missing file", []string{"verify", filepath.Join(td, "nonexistent")}, exitUsage, nil, "no such file"},
		{"no sframe", []string{"verify", filepath.Join(td, "gas/x86_64/remember.o")}, exitUsage, nil, "no .sframe section"},
		{"not ELF", []string{"verify", filepath.Join(td, "README.md")}, exitUsage, nil, "not an ELF file"},
		{"no file", []string{"verify"}, exitUsage, nil, "expected a FILE"},
		{"bad flag", []string{"verify", "--bogus", clean}, exitUsage, nil, "unknown flag"},
		{"help", []string{"verify", "--help"}, exitOK, []string{"Usage: sframe-gen verify"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := runCLI(tt.args...)
			if status != tt.status {
				t.Errorf("status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, tt.status, out, errOut)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if tt.stderr != "" && !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, errOut)
			}
		})
	}
}

// TestVerifyBigBinary generates SFrame for a copy of the system's python3
// (about 10 000 functions) and verifies it: in the default mode with no
// problem at all; with --gas-compat the only findings allowed are gas's
// .cfi_restore quirk that lower reproduces (FP still saved in SFrame where
// the CFI restored it, as in GCC's .cold partitions).
func TestVerifyBigBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates and verifies the system's python3 (runs in make test-long)")
	}
	src := sysfiles.PathProgram(t, "python3")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "python3"), filepath.Join(dir, "python3.sf")
	if err := os.WriteFile(in, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	machine := ef.Machine
	ef.Close()
	switch machine {
	case elf.EM_X86_64, elf.EM_AARCH64, elf.EM_S390:
	default:
		t.Skipf("%s is a %v program: sframe-gen writes SFrame for x86-64, AArch64 and s390x", src, machine)
	}
	if _, errOut, status := runCLI("-o", out, in); status != exitOK {
		t.Fatalf("generate %s: %s", src, errOut)
	}
	v, _ := verifyReport(t, out)
	for _, p := range v.Problems {
		t.Errorf("default mode: %s", p.Line)
	}
	t.Logf("default: %s", v.Summary)
	if _, errOut, status := runCLI("--gas-compat", "-o", out, in); status != exitOK {
		t.Fatalf("generate --gas-compat %s: %s", src, errOut)
	}
	v, _ = verifyReport(t, out)
	if v.Functions < 1000 {
		t.Fatalf("only %d functions", v.Functions)
	}
	for _, p := range v.Problems {
		if !(p.Kind == "mismatch" && strings.HasPrefix(p.Message, "FP: SFrame says *(CFA-") &&
			strings.HasSuffix(p.Message, "), CFI says unchanged (no rule)")) {
			t.Errorf("%s", p.Line)
		}
	}
	t.Logf("--gas-compat: %s", v.Summary)
}
