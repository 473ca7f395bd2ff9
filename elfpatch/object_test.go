package elfpatch

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestPatchObjectGas patches each testdata/gas object assembled without
// --gsframe with the .sframe/.rela.sframe of its --gsframe twin and checks
// objdump --sframe of the result, and of a link of it, against the twin's.
func TestPatchObjectGas(t *testing.T) {
	archs, _ := filepath.Glob("../testdata/gas/*")
	if len(archs) == 0 {
		t.Fatal("no testdata/gas")
	}
	for _, dir := range archs {
		arch := filepath.Base(dir)
		tarch := strings.TrimSuffix(arch, "_be")
		gsos, _ := filepath.Glob(filepath.Join(dir, "*.gs.o"))
		for _, gs := range gsos {
			name := strings.TrimSuffix(filepath.Base(gs), ".gs.o")
			if !hasSection(t, gs, ".sframe") {
				// gas writes no .sframe for an object without CFI
				// (nocfi.s): nothing to patch, which generate says
				// (no-cfi, TestBatch); the input must then have no CFI.
				if hasSection(t, filepath.Join(dir, name+".o"), ".eh_frame") {
					t.Errorf("%s: gas wrote no .sframe for an object with .eh_frame", gs)
				}
				continue
			}
			t.Run(arch+"/"+name, func(t *testing.T) {
				plain := filepath.Join(dir, name+".o")
				in, err := os.ReadFile(plain)
				if err != nil {
					t.Fatal(err)
				}
				sf, relocs := objectSFrame(t, gs)
				var out bytes.Buffer
				if err := PatchObject(bytes.NewReader(in), int64(len(in)), &out, sf, relocs); err != nil {
					t.Fatal(err)
				}
				tmp := t.TempDir()
				ours := filepath.Join(tmp, name+".o")
				if err := os.WriteFile(ours, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				// Second patch of our own output: byte-identical.
				var again bytes.Buffer
				if err := PatchObject(bytes.NewReader(out.Bytes()), int64(out.Len()), &again, sf, relocs); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again.Bytes(), out.Bytes()) {
					t.Errorf("second patch differs from the first")
				}
				od := sysfiles.GNURef.Tool(t, tarch, "objdump")
				want := sframeText(t, od, gs)
				if got := sframeText(t, od, ours); got != want {
					t.Errorf("objdump --sframe differs:\n got:\n%s\nwant:\n%s", got, want)
				}
				re := sysfiles.GNURef.Tool(t, tarch, "readelf")
				if _, errs := run(t, re, "-aW", ours); errs != "" {
					t.Errorf("readelf -aW warns: %s", errs)
				}
				if len(relocs) == 0 {
					return
				}
				ld := sysfiles.GNURef.Tool(t, tarch, "ld")
				ldArgs := []string{"-e", "0", "--no-warn-rwx-segments", "--unresolved-symbols=ignore-all"}
				if arch == "aarch64_be" {
					ldArgs = append(ldArgs, "-EB")
				}
				exeGS := filepath.Join(tmp, "gs.exe")
				exeOurs := filepath.Join(tmp, "ours.exe")
				run(t, ld, append(ldArgs, "-o", exeGS, gs)...)
				run(t, ld, append(ldArgs, "-o", exeOurs, ours)...)
				if got, want := sframeText(t, od, exeOurs), sframeText(t, od, exeGS); got != want {
					t.Errorf("linked objdump --sframe differs:\n got:\n%s\nwant:\n%s", got, want)
				}
			})
		}
	}
}
