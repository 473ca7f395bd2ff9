package stats_test

import (
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit/stats"
)

// lazyStats is the statistics of GNU ld's section of lazy.gs.so as
// "sframe-gen stats" measures them (TestMeasure, docs/stats.md), with
// its CFI coverage.
func lazyStats(t *testing.T) *stats.Stats {
	st := measureFile(t, "../../testdata/link/x86_64/lazy.gs.so")
	st.File, st.Kind, st.FileBytes = "lazy.gs.so", "shared-library", 16016
	st.CFIFunctions, st.CFIBytes, st.CoveredFunctions, st.CoveredBytes = 10, 1569, 10, 1569
	st.EHFrameBytes, st.EHFrameHdrBytes = 504, 92
	return st
}

func TestStatsWriteText(t *testing.T) {
	st := lazyStats(t)
	dry := *lazyStats(t)
	dry.DryRun, dry.Shared = true, false
	dry.Unshared = "no two functions have the same FREs"
	dry.CoveredFunctions, dry.UncoveredFunctions, dry.UncoveredBytes = 9, 1, 16
	dry.Skipped = []stats.Reason{{Reason: ".cfi_escape", Functions: 1, Bytes: 16}}
	dry.V2Lost, dry.V2LostReasons = 2, []stats.Reason{{Reason: "too far", Functions: 2, Bytes: 40}}
	const body = `  text bytes  1569 of 1569 covered (100.0%)
  FDEs        11: 2 PCMASK, 0 flex, 0 signal, 0 without FREs
  FREs        78: start address 1/2/4 bytes 41/37/0; data words 1/2/4 bytes 71/7/0; 0/1/2/3/4/5/6 words 0/31/47/0/0/0/0; mangled RA 0
  size        589 bytes; .eh_frame 504 + .eh_frame_hdr 92 = 596 (.sframe is 98.8% of that)
  bytes       header 28, FDE index 176, FDE attributes 55, FRE start addresses 115, FRE info 78, data words 137, other 0
  sharing     0 FDEs repeat an earlier FDE's FRE data (0 bytes): 589 bytes with one block per function, 589 with each block once (98.8% of .eh_frame + .eh_frame_hdr); 0 FDEs share in this section
`
	for _, tc := range []struct {
		st   *stats.Stats
		want string
	}{
		{st, `"lazy.gs.so": .sframe section (SFRAME_ABI_AMD64_ENDIAN_LITTLE, version 3)
  functions   10 of 10 described by the CFI covered (100.0%), 0 not covered
` + body + `  written     one block of FREs per function
`},
		{&dry, `"lazy.gs.so": dry run: the .sframe section generating would write (SFRAME_ABI_AMD64_ENDIAN_LITTLE, version 3)
  functions   9 of 10 described by the CFI covered (90.0%), 1 not covered
` + body + `  written     one block of FREs per function: no two functions have the same FREs
  skipped     1 functions, 16 bytes
         1  .cfi_escape (16 bytes)
  version 2   would leave out 2 more functions (--sframe-version 2 covers 7)
         2  too far (40 bytes)
`},
	} {
		var b strings.Builder
		if err := tc.st.WriteText(&b, `"lazy.gs.so"`); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("dry run %v:\n%s\nwant\n%s", tc.st.DryRun, b.String(), tc.want)
		}
	}
	var b strings.Builder
	if err := st.WriteLine(&b, "lazy.gs.so"); err != nil {
		t.Fatal(err)
	}
	if want := "lazy.gs.so: .sframe 589 bytes, 98.8% of .eh_frame + .eh_frame_hdr 596; functions 10 of 10 covered\n"; b.String() != want {
		t.Errorf("WriteLine: %q, want %q", b.String(), want)
	}
}

// TestTotalWriteText checks the total of a tree: the sums, then each kind
// and ABI in order, "-" for a ratio of nothing.
func TestTotalWriteText(t *testing.T) {
	total := stats.NewTotal()
	total.AddFile(&stats.File{Objects: []*stats.Stats{lazyStats(t)}, InstalledBytes: 16016 + 100, Skipped: 2,
		Failed: []stats.Failure{{Name: "bad"}}})
	total.AddFile(&stats.File{Objects: []*stats.Stats{{Kind: "object", ABI: "SFRAME_ABI_AARCH64_ENDIAN_LITTLE", FileBytes: 100}}, WithoutCFI: 1})
	var b strings.Builder
	if err := total.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	const lazy = `  .sframe     589 bytes: 0.988 of .eh_frame 504 + .eh_frame_hdr 92 = 596, 3.7% of the files
  unshared    589 bytes with one block of FREs per function (GNU's form): 0.988 of .eh_frame + .eh_frame_hdr, 3.7% of the files
  bytes       header 28, FDE index 176, FDE attributes 55, FRE start addresses 115, FRE info 78, data words 137, other 0; sharing saved 0, narrowing saved 0
  functions   10 of 10 described by the CFI covered (100.0%); 11 FDEs, 78 FREs
`
	const empty = `  .sframe     0 bytes: - of .eh_frame 0 + .eh_frame_hdr 0 = 0, 0.0% of the files
  unshared    0 bytes with one block of FREs per function (GNU's form): - of .eh_frame + .eh_frame_hdr, 0.0% of the files
  bytes       header 0, FDE index 0, FDE attributes 0, FRE start addresses 0, FRE info 0, data words 0, other 0; sharing saved 0, narrowing saved 0
  functions   0 of 0 described by the CFI covered (-); 0 FDEs, 0 FREs
`
	want := "total: 2 files described, 1 without CFI, 2 skipped, 1 failed; 16116 bytes of ELF files and archives\n" + lazy +
		"object: 1 file, 100 bytes\n" + empty +
		"shared-library: 1 file, 16016 bytes\n" + lazy +
		"SFRAME_ABI_AARCH64_ENDIAN_LITTLE: 1 file, 100 bytes\n" + empty +
		"SFRAME_ABI_AMD64_ENDIAN_LITTLE: 1 file, 16016 bytes\n" + lazy
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
