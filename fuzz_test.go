package sframegen_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit"
)

// maxFuzzSeed keeps the seeds small enough for the fuzzer to mutate.
const maxFuzzSeed = 16 << 10

// FuzzGenerate feeds any bytes to Generate, the library's entry point: it
// must return an error or a section, never panic; a section must decode,
// and a linked file's must hold every function it says it lowered, each
// found by the Reader at its start.
func FuzzGenerate(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "link", "*", "*"))
	if err != nil {
		f.Fatal(err)
	}
	seeds := 0
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err == nil && len(data) <= maxFuzzSeed && bytes.HasPrefix(data, []byte("\x7fELF")) {
			f.Add(data, false)
			seeds++
		}
	}
	if seeds == 0 {
		f.Fatal("no seed under testdata/link")
	}
	f.Fuzz(func(t *testing.T, data []byte, share bool) {
		sec, err := sframegen.Generate(bytes.NewReader(data), int64(len(data)), sframegen.Options{Share: sharing(share)})
		if err != nil {
			return
		}
		r, err := emit.NewReader(sec.Bytes(), sec.Addr)
		if err != nil {
			t.Fatalf("Generate's section does not decode: %v", err)
		}
		if n := sec.Result().Section.NumFDEs(); r.NumFuncs() != n {
			t.Fatalf("%d functions read, %d lowered", r.NumFuncs(), n)
		}
		if sec.Target.Relocatable {
			return // start fields before relocation
		}
		for i := 0; i < r.NumFuncs(); i++ {
			fn := r.Func(i)
			if len(fn.FDE.FREs) == 0 || fn.FDE.FREs[0].StartAddr != 0 {
				continue
			}
			if _, _, ok := r.Find(fn.Start); !ok {
				t.Fatalf("function %d at %#x: Find finds nothing at its start", i, fn.Start)
			}
		}
	})
}

// TestGenerateErrors checks the errors a caller tells apart.
func TestGenerateErrors(t *testing.T) {
	lib, err := os.ReadFile(filepath.Join("testdata", "link", "x86_64", "direct.so"))
	if err != nil {
		t.Fatal(err)
	}
	// The same library without CFI: its .eh_frame and .eh_frame_hdr renamed.
	noCFI := bytes.ReplaceAll(lib, []byte(".eh_frame"), []byte(".xx_frame"))
	s390x, err := os.ReadFile(filepath.Join("testdata", "link", "s390x", "direct.so"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		opt  sframegen.Options
		want error
	}{
		{"no CFI", noCFI, sframegen.Options{}, sframegen.ErrNoCFI},
		{"big-endian sharing", s390x, sframegen.Options{Share: sframegen.ShareAlways}, sframegen.ErrShareBigEndian},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sframegen.Generate(bytes.NewReader(tc.data), int64(len(tc.data)), tc.opt)
			if !errors.Is(err, tc.want) {
				t.Errorf("Generate = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := sframegen.Generate(bytes.NewReader(lib), int64(len(lib)), sframegen.Options{}); err != nil {
		t.Errorf("the library itself: %v", err)
	}
}

// sharing is ShareAlways for share, else ShareNever (the default shares
// where ShareAlways does and does not where it fails).
func sharing(share bool) sframegen.Sharing {
	if share {
		return sframegen.ShareAlways
	}
	return sframegen.ShareNever
}
