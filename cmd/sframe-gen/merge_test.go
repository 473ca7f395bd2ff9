package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestMergeFDEsConsumers generates each little-endian linked file of
// testdata/link and the system's libc and libstdc++ with --merge-fdes
// (across padding), --merge-fdes=adjacent and --merge-fdes=all and checks the result with
// the real readers: GNU libsframe (sframe-lookup) reads what emit.Decode
// reads, GNU objdump --sframe dumps it as `sframe-gen dump` does, and
// `sframe-gen verify` (the CFI at every address, the Linux kernel's
// rules) finds no problem in the adjacent merge and, across padding, none
// but the padding's addresses that no CFI FDE describes. The section has
// fewer FDEs than the default's, and --gas-compat refuses the flag.
func TestMergeFDEsConsumers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs libsframe and objdump at every FRE of the system's libc and libstdc++ (make test-long)")
	}
	prog := libsframeLookup(t)
	dir := t.TempDir()
	merged := map[string]int{}
	for i, p := range shareInputs(t) {
		arch := "x86_64"
		if strings.Contains(p, "aarch64") {
			arch = "aarch64"
		}
		objdump := sysfiles.GNURef.Tool(t, arch, "objdump")
		plain := filepath.Join(dir, fmt.Sprintf("%d.default", i))
		if _, stderr, code := runCLI("-o", plain, p); code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, stderr)
		}
		ps, err := emit.Decode(sframeSection(t, plain))
		if err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"adjacent", "padding", "all"} {
			out := filepath.Join(dir, fmt.Sprintf("%d.%s", i, how))
			if _, stderr, code := runCLI("--merge-fdes="+how, "-o", out, p); code != 0 {
				t.Fatalf("--merge-fdes=%s %s: exit %d: %s", how, p, code, stderr)
			}
			sb := sframeSection(t, out)
			s, err := emit.Decode(sb)
			if err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if s.NumFDEs() > ps.NumFDEs() {
				t.Errorf("%s: %d FDEs merged, %d not", out, s.NumFDEs(), ps.NumFDEs())
			}
			merged[how] += ps.NumFDEs() - s.NumFDEs()
			if got, want := runLookup(t, prog, sb), lookupText(s); got != want {
				t.Errorf("%s: libsframe (got) reads the merged section otherwise than emit.Decode (want):\n%s", out, firstDiff(want, got))
			}
			ours, stderr, code := runCLI("dump", out)
			if code != 0 {
				t.Fatalf("dump %s: %s", out, stderr)
			}
			if gnu := objdumpSFrame(t, objdump, out); gnu != ours {
				t.Errorf("%s: objdump --sframe (got) and sframe-gen dump (want) differ:\n%s", out, firstDiff(ours, gnu))
			}
			stdout, stderr, code := runCLI("verify", out)
			for _, line := range strings.Split(strings.TrimSpace(stdout+stderr), "\n") {
				if line == "" || strings.Contains(line, " functions checked, ") || strings.Contains(line, ": note: ") ||
					how != "adjacent" && strings.HasSuffix(strings.SplitN(line, ", no CFI FDE does", 2)[0], "SFrame describes these addresses") {
					continue
				}
				t.Errorf("verify %s: exit %d: %s", out, code, line)
			}
		}
	}
	if merged["adjacent"] == 0 || merged["padding"] <= merged["adjacent"] || merged["all"] <= merged["padding"] {
		t.Errorf("FDEs merged: %v", merged)
	}
	if _, stderr, code := runCLI("--gas-compat", "--merge-fdes", "--raw", "-o", filepath.Join(dir, "x"), shareInputs(t)[0]); code != 2 {
		t.Errorf("--gas-compat --merge-fdes: exit %d (%s), want 2", code, stderr)
	}
}
