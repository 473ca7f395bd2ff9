package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestGoldenRecipe runs the recipe of docs/golden.md literally (bash, the
// built sframe-gen first in $PATH, the reference binutils as AS, OBJCOPY
// and READELF) on the assembly inputs of testdata/gas of every ABI whose
// GNU object has a .sframe section: cmp and diff must find the section's
// bytes and relocations identical. In -short, the first four inputs of
// each ABI.
func TestGoldenRecipe(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```sh\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok || !strings.Contains(block, "cmp gnu.sframe ours.sframe") {
		t.Fatal("docs/golden.md: no recipe")
	}
	sysfiles.NeedProgram(t, "bash")
	bindir := filepath.Dir(buildCommand(t))
	for _, arch := range []string{"x86_64", "aarch64", "aarch64_be", "s390x"} {
		tools := strings.TrimSuffix(arch, "_be")
		as := sysfiles.GNURef.Tool(t, tools, "as")
		if arch == "aarch64_be" {
			as += " -EB"
		}
		env := append(os.Environ(), "PATH="+bindir+string(os.PathListSeparator)+os.Getenv("PATH"),
			"AS="+as, "OBJCOPY="+sysfiles.GNURef.Tool(t, tools, "objcopy"), "READELF="+sysfiles.GNURef.Tool(t, tools, "readelf"))
		sources, _ := filepath.Glob(filepath.Join(testdataDir(), "gas", arch, "*.s"))
		ran := 0
		for _, src := range sources {
			name := strings.TrimSuffix(filepath.Base(src), ".s")
			if !hasSFrameSection(t, filepath.Join(testdataDir(), "gas", arch, name+".gs.o")) {
				continue // gas writes none (no CFI): nothing to compare
			}
			if testing.Short() && ran == 4 {
				break
			}
			ran++
			t.Run(arch+"/"+name, func(t *testing.T) {
				dir := t.TempDir()
				data, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "foo.s"), data, 0o644); err != nil {
					t.Fatal(err)
				}
				// An input's own assembler flags ("# as-flags: ...", as
				// testdata/regen.sh assembles it).
				env := env
				if m := asFlags.FindSubmatch(data); m != nil {
					env = append(env, "AS="+as+" "+string(m[1]))
				}
				sh := exec.Command("bash", "-e", "-c", block)
				sh.Dir, sh.Env = dir, env
				out, err := sh.CombinedOutput()
				if name == "warnings" {
					// Directives .eh_frame keeps no trace of (docs/golden.md):
					// the one input whose section differs.
					if err == nil || !strings.Contains(string(out), "gnu.sframe ours.sframe differ") {
						t.Errorf("warnings.s: the recipe found no difference in the section (%v); docs/golden.md says it differs:\n%s", err, out)
					}
					return
				}
				if err != nil {
					t.Errorf("the recipe: %v\n%s", err, out) // gas's warnings aside, cmp and diff print only differences
				}
				if _, err := os.Stat(filepath.Join(dir, "ours.rela")); err != nil {
					t.Errorf("the relocations were not compared: %v", err)
				}
			})
		}
		if ran == 0 {
			t.Errorf("%s: no input", arch)
		}
	}
}

// asFlags is an input's line of extra assembler flags.
var asFlags = regexp.MustCompile(`(?m)^# as-flags: (.*)$`)

// hasSFrameSection reports whether the ELF file path has a .sframe section.
func hasSFrameSection(t *testing.T, path string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".sframe") != nil
}
