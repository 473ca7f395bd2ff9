package sframegen_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestGoModRequiresOnlyWhatTheCodeImports checks that every module the
// main go.mod requires is imported by the module's packages (tests
// included), so that importing the library brings nothing into a user's
// module graph that only a cross-check needs: delve's cross-check is a
// module of its own, testdata/delvecheck.
func TestGoModRequiresOnlyWhatTheCodeImports(t *testing.T) {
	out, err := exec.Command("go", "mod", "edit", "-json").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Require []struct{ Path string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	used := importedModules(t, "-deps", "-test")
	nonTest := importedModules(t, "-deps")
	for _, r := range mod.Require {
		if !used[r.Path] {
			t.Errorf("go.mod requires %s, which no package of the module imports", r.Path)
		} else if !nonTest[r.Path] {
			t.Errorf("go.mod requires %s for tests only: every importer of the library would get it (move the test into a module of its own, as testdata/delvecheck)", r.Path)
		}
	}
}

// importedModules returns the modules of the packages that go list with
// flags finds below the module's root.
func importedModules(t *testing.T, flags ...string) map[string]bool {
	t.Helper()
	args := append([]string{"list"}, flags...)
	args = append(args, "-f", "{{with .Module}}{{.Path}}{{end}}", "./...")
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	mods := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		mods[m] = true
	}
	return mods
}
