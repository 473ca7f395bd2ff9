package sframegen_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"testing"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/verify"
)

// TestErrorsAcrossPackages checks that each condition has one sentinel,
// whichever package reports it: every error below must be errors.Is the
// sentinel of its condition (cfi.ErrNoCFI, which sframegen.ErrNoCFI is;
// emit.ErrNoSFrame), and not the other one.
func TestErrorsAcrossPackages(t *testing.T) {
	if sframegen.ErrNoCFI != cfi.ErrNoCFI {
		t.Fatal("sframegen.ErrNoCFI is not cfi.ErrNoCFI")
	}
	noCFI := filepath.Join("testdata", "gas", "x86_64", "nocfi.o")          // neither .sframe nor CFI
	withSFrame := filepath.Join("testdata", "link", "x86_64", "lazy.gs.so") // .sframe and .eh_frame, no .debug_frame
	open := func(path string) *elf.File {
		t.Helper()
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	generator := func(opt sframegen.Options) *sframegen.Generator {
		g, err := sframegen.NewGenerator(opt, sframegen.Resources{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	data, err := os.ReadFile(noCFI)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  func() error
		want error
	}{
		{"cfi.Read", func() error { _, err := cfi.Read(open(noCFI), cfi.Auto); return err }, cfi.ErrNoCFI},
		{"cfi.Read --debug-frame", func() error { _, err := cfi.Read(open(withSFrame), cfi.DebugFrame); return err }, cfi.ErrNoCFI},
		{"cfi.Open", func() error { _, err := cfi.Open(open(noCFI), cfi.Auto); return err }, cfi.ErrNoCFI},
		{"sframegen.Generate", func() error {
			_, err := sframegen.Generate(bytes.NewReader(data), int64(len(data)), sframegen.Options{})
			return err
		}, cfi.ErrNoCFI},
		{"sframegen.GenerateFile", func() error { _, err := sframegen.GenerateFile(noCFI, sframegen.Options{}); return err }, cfi.ErrNoCFI},
		{"sframegen.WriteFile", func() error {
			_, err := sframegen.WriteFile(noCFI, filepath.Join(t.TempDir(), "out.o"), sframegen.Options{})
			return err
		}, cfi.ErrNoCFI},
		{"Generator.Stats", func() error {
			_, err := generator(sframegen.Options{}).Stats(bytes.NewReader(data), int64(len(data)), open(noCFI), false)
			return err
		}, cfi.ErrNoCFI},
		{"verify.File --debug-frame", func() error {
			_, err := verify.File(open(withSFrame), verify.Options{Source: cfi.DebugFrame})
			return err
		}, cfi.ErrNoCFI},
		{"verify.File", func() error { _, err := verify.File(open(noCFI), verify.Options{}); return err }, emit.ErrNoSFrame},
		{"emit.ReadELFSection", func() error { _, _, err := emit.ReadELFSection(open(noCFI)); return err }, emit.ErrNoSFrame},
		{"emit.ReaderFromELF", func() error { _, err := emit.ReaderFromELF(open(noCFI)); return err }, emit.ErrNoSFrame},
	}
	for _, tt := range tests {
		err := tt.err()
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v is not %v", tt.name, err, tt.want)
		}
		for _, other := range []error{cfi.ErrNoCFI, emit.ErrNoSFrame} {
			if other != tt.want && errors.Is(err, other) {
				t.Errorf("%s: error %v is %v too", tt.name, err, other)
			}
		}
	}
}

// TestFindSection checks the one rule that finds the SFrame section, for
// the types GNU binutils write (SHT_GNU_SFRAME since 2.45, SHT_PROGBITS
// before) and for a file without one.
func TestFindSection(t *testing.T) {
	tests := []struct {
		path string
		typ  elf.SectionType // 0: none found
	}{
		{"testdata/link/x86_64/lazy.gs.so", emit.SectionType},
		{"testdata/v2/link/x86_64/ibt.gs.so", elf.SHT_PROGBITS},
		{"testdata/gas/x86_64/nocfi.o", 0},
		{"testdata/gas/x86_64/remember.o", 0},
	}
	for _, tt := range tests {
		f, err := elf.Open(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		s := emit.FindSection(f)
		switch {
		case tt.typ == 0 && s != nil:
			t.Errorf("%s: found %s", tt.path, s.Name)
		case tt.typ != 0 && (s == nil || s.Type != tt.typ || s.Name != ".sframe"):
			t.Errorf("%s: found %v, want .sframe of type %v", tt.path, s, tt.typ)
		}
		f.Close()
	}
}
