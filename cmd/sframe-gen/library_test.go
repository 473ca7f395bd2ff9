package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/lower"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// libraryFiles returns the ELF files of testdata/link (objects, executables
// and shared libraries of every ABI) and the machine's libstdc++, whose CFI
// is big enough to be lowered on every CPU.
func libraryFiles(t *testing.T) []string {
	var files []string
	for _, dir := range []string{"x86_64", "aarch64", "s390x"} {
		ents, err := os.ReadDir(filepath.Join(testdataDir(), "link", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			path := filepath.Join(testdataDir(), "link", dir, e.Name())
			if data, err := os.ReadFile(path); err == nil && bytes.HasPrefix(data, []byte("\x7fELF")) {
				files = append(files, path)
			}
		}
	}
	if len(files) < 20 {
		t.Fatalf("only %d ELF files under testdata/link", len(files))
	}
	if testing.Short() {
		return files // the system's libstdc++ in make test-long only
	}
	return append(files, sysfiles.CompilerLib(t, "gcc", "libstdc++.so.6"))
}

// TestLibraryIsTheCommand checks that the library's entry points give what
// the command writes: sframegen.Generate's bytes are those of --raw at the
// address Generate reports, and WriteFile's file is sframe-gen -o's, byte
// for byte, with every option the command maps onto sframegen.Options.
func TestLibraryIsTheCommand(t *testing.T) {
	variants := []struct {
		name  string
		flags []string
		opt   sframegen.Options
	}{
		{"default", nil, sframegen.Options{}},
		{"gas-compat", []string{"--gas-compat"}, sframegen.Options{GasCompat: true}},
		{"share-fres", []string{"--share-fres"}, sframegen.Options{Share: sframegen.ShareAlways}},
		{"no-share-fres", []string{"--no-share-fres"}, sframegen.Options{Share: sframegen.ShareNever}},
		{"v2", []string{"--sframe-version", "2"}, sframegen.Options{Version: 2}},
		{"v2-2.44", []string{"--sframe-version", "2", "--v2-layout", "2.44"}, sframegen.Options{Version: 2, V2Layout: lower.V2Binutils244}},
		{"strict", []string{"--strict"}, sframegen.Options{Strict: true}},
	}
	dir := t.TempDir()
	for _, file := range libraryFiles(t) {
		for _, v := range variants {
			t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file)+"/"+v.name, func(t *testing.T) {
				sec, genErr := sframegen.GenerateFile(file, v.opt)
				libOut := filepath.Join(dir, "lib")
				_, writeErr := sframegen.WriteFile(file, libOut, v.opt)
				if (genErr == nil) != (writeErr == nil) {
					t.Fatalf("GenerateFile: %v; WriteFile: %v", genErr, writeErr)
				}
				cmdOut := filepath.Join(dir, "cmd")
				os.Remove(cmdOut)
				_, stderr, code := runCLI(append(append([]string{"-o", cmdOut}, v.flags...), file)...)
				if genErr != nil {
					if code == exitOK {
						t.Fatalf("library: %v; the command succeeded", genErr)
					}
					var strict *sframegen.StrictError
					if v.opt.Strict && !errors.As(genErr, &strict) && !errors.Is(genErr, sframegen.ErrNoCFI) {
						t.Errorf("with Strict: %v, not a *StrictError", genErr)
					}
					return
				}
				if code != exitOK {
					t.Fatalf("the command failed (%s); the library did not", strings.TrimSpace(stderr))
				}
				assertSameFile(t, libOut, cmdOut)

				raw := filepath.Join(dir, "raw")
				args := append([]string{"--raw", "-o", raw}, v.flags...)
				if !sec.Target.Relocatable {
					args = append(args, "--section-addr", fmt.Sprint(sec.Addr))
				}
				if _, stderr, code := runCLI(append(args, file)...); code != exitOK {
					t.Fatalf("--raw: %s", stderr)
				}
				want, err := os.ReadFile(raw)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(sec.Bytes(), want) {
					t.Errorf("Generate: %d bytes at %#x, not --raw's %d", len(sec.Bytes()), sec.Addr, len(want))
				}
				written, err := os.ReadFile(libOut)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(written, sec.Bytes()) {
					t.Errorf("the file WriteFile wrote does not hold the section Generate made")
				}
			})
		}
	}
}

func assertSameFile(t *testing.T, got, want string) {
	t.Helper()
	a, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s (%d bytes) differs from %s (%d bytes)", got, len(a), want, len(b))
	}
}
