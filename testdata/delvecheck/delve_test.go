// Package delvecheck cross-checks the cfi package with delve's independent
// .eh_frame parser. It is a module of its own so that the library's go.mod
// does not require delve: `make test` runs it (cd testdata/delvecheck && go
// test ./...), and its go.mod replaces the library's module with ../..
package delvecheck

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestDelveFDEs cross-checks the FDE set and PC ranges of little-endian
// x86-64 and arm64 .eh_frame sections with delve's independent parser
// (which cannot produce rows, nor read big-endian, relocatable or
// augmentation 'B' input: see docs/rows.md).
func TestDelveFDEs(t *testing.T) {
	files, _ := filepath.Glob("../link/x86_64/*")
	a64, _ := filepath.Glob("../link/aarch64/*")
	files = append(files, a64...)
	system := []string{sysfiles.PathProgram(t, "ls"), sysfiles.CompilerLib(t, "gcc", "libstdc++.so.6")}
	files = append(files, system...)
	if !testing.Short() {
		llvm, _ := filepath.Glob("/root/.rustup/toolchains/*/lib/libLLVM*.so*")
		files = append(files, llvm...)
	}
	checked := 0
	for _, path := range files {
		f, err := elf.Open(path)
		if err != nil {
			if slices.Contains(system, path) {
				t.Fatal(err)
			}
			continue // not ELF (golden text files, a linker script)
		}
		sec := f.Section(".eh_frame")
		if sec == nil || f.Type == elf.ET_REL || (f.Machine != elf.EM_X86_64 && f.Machine != elf.EM_AARCH64) {
			f.Close()
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			defer f.Close()
			frames, err := cfi.Read(f, cfi.EHFrame)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range frames.Errors {
				t.Errorf("%v", e)
			}
			data, err := sec.Data()
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := delveParse(data, f.ByteOrder, sec.Addr)
			if err != nil {
				if hasBKey(frames) {
					t.Skipf("delve refuses augmentation B: %v", err)
				}
				t.Fatalf("delve: %v", err)
			}
			var ours, want []string
			for _, fde := range frames.FDEs {
				ours = append(ours, fmt.Sprintf("%#x..%#x", fde.Start, fde.End()))
			}
			for _, fde := range theirs {
				want = append(want, fmt.Sprintf("%#x..%#x", fde.Begin(), fde.End()))
			}
			slices.Sort(ours)
			slices.Sort(want)
			if !slices.Equal(ours, want) {
				t.Errorf("%d FDEs, delve %d; first difference: %s", len(ours), len(want), firstDiff(ours, want))
			}
			checked++
		})
	}
	// The x86-64 and AArch64 linked files under testdata/link, ls and
	// libstdc++.
	if checked < 10 {
		t.Errorf("%d files checked", checked)
	}
}

func hasBKey(fr *cfi.Frames) bool {
	for _, c := range fr.CIEs {
		if c.BKey {
			return true
		}
	}
	return false
}

// delveParse runs delve's parser, which panics on some inputs.
func delveParse(data []byte, order binary.ByteOrder, addr uint64) (fdes frame.FrameDescriptionEntries, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return frame.Parse(data, order, 0, 8, addr)
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("ours %s, delve %s", a[i], b[i])
		}
	}
	return "one list is a prefix of the other"
}
