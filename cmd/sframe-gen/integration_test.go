package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestIntegration runs the build-system and packaging recipes of
// docs/integration.md with the real tools: each testdata/integration/TOOL/
// test.sh builds a small project with TOOL, sframe-gen wired in as the page
// says, and checks the result (PT_GNU_SFRAME, sframe-gen verify, the programs
// run, under qemu-user when cross-built). A script's "# needs:" line names
// the programs it runs: a missing one skips it, or fails it under CI=true.
func TestIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds projects with CMake, Meson, debhelper, rpm, ... (runs in make test-long)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob(filepath.Join(root, "testdata", "integration", "*", "test.sh"))
	if len(scripts) < 8 {
		t.Fatalf("found %d integration scripts under testdata/integration, want the 8 of docs/integration.md", len(scripts))
	}
	bin := buildCommand(t)
	path := filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, script := range scripts {
		name := filepath.Base(filepath.Dir(script))
		t.Run(name, func(t *testing.T) {
			for _, tool := range scriptNeeds(t, script) {
				if _, err := exec.LookPath(tool); err != nil {
					// needTool looks in this process's PATH.
					sysfiles.NeedProgram(t, tool)
				}
			}
			// The packaging scripts run dpkg-buildpackage three times
			// (deb) or build sframe-gen's own package (debpkg).
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", script)
			cmd.Env = append(os.Environ(), "PATH="+path, "REPO="+root, "WORK="+t.TempDir(), "LC_ALL=C")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", script, err, out)
			}
			if !strings.Contains(string(out), name+": ok") {
				t.Fatalf("%s did not finish (no %q line):\n%s", script, name+": ok", out)
			}
		})
	}
}

// scriptNeeds reads the programs a script's "# needs:" line names.
func scriptNeeds(t *testing.T, script string) []string {
	f, err := os.Open(script)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "# needs:"); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("%s: no \"# needs:\" line", script)
	return nil
}
