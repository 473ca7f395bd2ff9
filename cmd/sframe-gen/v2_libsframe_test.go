package main

import (
	"fmt"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// oldLibsframeLookup builds testdata/libsframe/sframe-lookup.c against the
// static libsframe 2.44 of testdata/gnu-old-ref.sh's prefix
// ($GNU_OLD_REF/../root), which reads SFrame version 2 only.
func oldLibsframeLookup(t *testing.T) string {
	t.Helper()
	gcc := sysfiles.NeedProgram(t, "gcc")
	root := filepath.Join(sysfiles.GNUOld.Prefix(), "root")
	lib := prefixLib(root, "libsframe.a")
	inc := filepath.Join(root, "usr", "include")
	for _, p := range []string{lib, filepath.Join(inc, "sframe-api.h")} {
		if _, err := os.Stat(p); err != nil {
			sysfiles.NeedInput(t, "libsframe 2.44 missing: %v: %s", err, sysfiles.GNUOld.Install)
		}
	}
	src := filepath.Join(testdataDir(), "libsframe")
	out := filepath.Join(t.TempDir(), "sframe-lookup-2.44")
	cmd := exec.Command(gcc, "-std=gnu11", "-O1", "-Wall", "-Werror",
		"-I", filepath.Join(src, "include"), "-I", inc,
		"-o", out, filepath.Join(src, "sframe-lookup.c"), lib)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building sframe-lookup against libsframe 2.44: %v\n%s", err, b)
	}
	return out
}

// TestLibsframeLookupV2 has GNU libsframe look up every FRE of the version
// 2 sections sframe-gen writes for the linked goldens: libsframe 2.44
// (Debian 13's) on the 2.44 layout, the reference libsframe on the 2.45
// layout, and libsframe 2.44 on ld 2.44's own sections (testdata/v2). What
// it reads must be what emit.Decode reads, with libsframe's lookup rules.
func TestLibsframeLookupV2(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs libsframe 2.44 and 2.47 at every FRE of every linked golden (make test-long)")
	}
	old := oldLibsframeLookup(t)
	cur := libsframeLookup(t)
	ld244, _ := filepath.Glob(filepath.Join(testdataDir(), "v2", "link", "*", "*.sframe"))
	if len(ld244) < 5 {
		t.Fatalf("%d sections of ld 2.44 under testdata/v2/link", len(ld244))
	}
	for _, p := range ld244 {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		compareLookupWith(t, old, p, data, gnuFindFRE244)
	}
	files, _ := linkedInputs(t)
	dir := t.TempDir()
	n := 0
	for i, p := range files {
		for _, layout := range []string{"2.44", "2.45"} {
			s390x := strings.Contains(p, "/s390x/")
			if layout == "2.44" && s390x {
				continue // binutils 2.44 has no s390x SFrame
			}
			out := filepath.Join(dir, fmt.Sprint(i, layout))
			if _, stderr, code := runCLI("--sframe-version", "2", "--v2-layout", layout, "--raw", "-o", out, p); code != 0 {
				t.Fatalf("%s: exit %d: %s", p, code, stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if layout == "2.44" {
				compareLookupWith(t, old, p+" (v2 2.44)", data, gnuFindFRE244)
			} else {
				compareLookup(t, cur, p+" (v2 2.45)", data)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("%d sections looked up", n)
	}
}

// gnuFindFRE244 is sframe_find_fre of libsframe 2.44: the function is the
// last one of the sorted index that starts at or before pc, whatever its
// size (later releases also require pc below its end), then the FRE as
// gnuFindFRE finds it, except that a PCMASK function's FREs are matched
// against the section-relative pc modulo the block size. So a PCMASK
// function answers for the addresses just past its end too, and none of
// its addresses when it lies before the section.
func gnuFindFRE244(s *emit.Section, pc int64) *emit.FRE {
	n := s.NumFDEs()
	if n == 0 || s.Header.Flags&emit.FlagFDESorted == 0 {
		return nil
	}
	i, low, high := -1, 0, n-1
	for low <= high {
		mid := low + (high-low)/2
		st := int64(int32(s.FuncStart(mid, 0)))
		if st == pc {
			i = mid
			break
		}
		if st < pc {
			if mid == n-1 || int64(int32(s.FuncStart(mid+1, 0))) > pc {
				i = mid
				break
			}
			low = mid + 1
		} else {
			high = mid - 1
		}
	}
	if i < 0 {
		return nil
	}
	fde, err := s.FDE(i)
	if err != nil {
		return nil
	}
	f := &fde
	off := uint32(pc - int64(int32(s.FuncStart(i, 0))))
	for j := range f.FREs {
		e := &f.FREs[j]
		end := f.Size - 1
		if j+1 < len(f.FREs) {
			end = f.FREs[j+1].StartAddr - 1
		}
		o := off
		if f.PCType() == emit.PCMask {
			if f.RepSize == 0 {
				return nil
			}
			// 2.44 takes the section-relative PC, not the offset in
			// the function, modulo the block size, in signed 32-bit
			// arithmetic: a function placed before the section (a
			// negative start, as ld 2.44 lays out its own output) gets
			// a negative remainder that matches no FRE.
			o = uint32(int32(pc) % int32(f.RepSize))
		}
		if e.StartAddr <= o && end >= o {
			return e
		}
	}
	return nil
}
