package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// helpFlags returns the flags (long, and short where there is one) that
// the help of a command lists ("" is generate).
func helpFlags(t *testing.T, cmd string) []string {
	t.Helper()
	var buf bytes.Buffer
	c := &cli{stdout: &buf, stderr: &buf}
	args := []string{"--help"}
	if cmd != "" {
		args = []string{cmd, "--help"}
	}
	c.main(args)
	re := regexp.MustCompile(`(?m)^\s+(?:(-[a-zA-Z]), )?(--[a-z0-9-]+)`)
	var flags []string
	for _, m := range re.FindAllStringSubmatch(buf.String(), -1) {
		if m[1] != "" {
			flags = append(flags, m[1])
		}
		flags = append(flags, m[2])
	}
	if len(flags) < 2 {
		t.Fatalf("sframe-gen %s --help lists %d flags:\n%s", cmd, len(flags), buf.String())
	}
	return flags
}

// TestManPageAndCompletion keeps docs/sframe-gen.1 and the bash completion
// in step with the flags the commands define: every flag in a command's
// help must be in both.
func TestManPageAndCompletion(t *testing.T) {
	root := filepath.Join("..", "..")
	man, err := os.ReadFile(filepath.Join(root, "docs", "sframe-gen.1"))
	if err != nil {
		t.Fatal(err)
	}
	comp, err := os.ReadFile(filepath.Join(root, "docs", "integration", "sframe-gen.bash"))
	if err != nil {
		t.Fatal(err)
	}
	// The completion's word list of each command: the case arm "dump) opts=...",
	// and "*) opts=..." for generate.
	arm := func(cmd string) string {
		label := regexp.QuoteMeta(cmd)
		if cmd == "" {
			label = `\*`
		}
		m := regexp.MustCompile(`(?s)\s` + label + `\) opts='([^']*)'`).FindStringSubmatch(string(comp))
		if m == nil {
			t.Fatalf("completion: no word list for %q", cmd)
		}
		return " " + strings.Join(strings.Fields(m[1]), " ") + " "
	}
	for _, cmd := range []string{"", "dump", "verify", "stats", "rows", "stack"} {
		words := arm(cmd)
		for _, f := range helpFlags(t, cmd) {
			if !bytes.Contains(man, []byte(strings.ReplaceAll(f, "-", `\-`))) {
				t.Errorf("docs/sframe-gen.1 does not mention %s (sframe-gen %s)", f, cmd)
			}
			if !strings.Contains(words, " "+f+" ") {
				t.Errorf("the bash completion of sframe-gen %s does not offer %s", cmd, f)
			}
		}
	}
}

// TestBashCompletion runs the completion function in bash, with Debian's
// bash-completion library.
func TestBashCompletion(t *testing.T) {
	lib := "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(lib); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found (CI=true: no test may skip)", lib)
		}
		t.Skipf("%s not found", lib)
	}
	bash := needTool(t, "bash")
	script, _ := filepath.Abs(filepath.Join("..", "..", "docs", "integration", "sframe-gen.bash"))
	complete := func(line string) []string {
		t.Helper()
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		prog := `source "$1"; source "$2"; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _sframe_gen; printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, append([]string{"-c", prog, "bash", lib, script}, words...)...)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s", line, err, out)
		}
		return strings.Fields(string(out))
	}
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"sframe-gen --arch ", []string{"x86_64", "amd64", "aarch64", "arm64", "aarch64_be", "s390x"}},
		{"sframe-gen --sframe-v", []string{"--sframe-version"}},
		{"sframe-gen verify --j", []string{"--json"}},
		{"sframe-gen stats --dr", []string{"--dry-run"}},
		{"sframe-gen ver", []string{"verify"}},
	} {
		if got := complete(tt.line); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("completing %q: %q, want %q", tt.line, got, tt.want)
		}
	}
}
