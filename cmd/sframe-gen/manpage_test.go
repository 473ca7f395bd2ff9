package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
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
		sysfiles.NeedInput(t, "%s not found: install Debian's bash-completion", lib)
	}
	bash := sysfiles.NeedProgram(t, "bash")
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
		{"sframe-gen he", []string{"help"}},
		{"sframe-gen help st", []string{"stats", "stack"}},
	} {
		if got := complete(tt.line); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("completing %q: %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestHelpInStep keeps the help of every command and the man page in
// step: each --help (and "help COMMAND") has a synopsis, a description
// and the same -h/--help wording, names no file of the source tree, and
// the man page has each command in its synopsis and COMMANDS, describes
// -h/--help with the same words, and refers to no manual page of a
// command make install installs without one.
func TestHelpInStep(t *testing.T) {
	root := filepath.Join("..", "..")
	man, err := os.ReadFile(filepath.Join(root, "docs", "sframe-gen.1"))
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{""}
	for _, cmd := range commands() {
		names = append(names, cmd.name)
	}
	topHelp, _, _ := runCLI("--help")
	helpLine := regexp.MustCompile(`(?m)^  -h, --help +(.*)$`)
	for _, name := range names {
		args := []string{"--help"}
		if name != "" {
			args = []string{name, "--help"}
		}
		stdout, stderr, code := runCLI(args...)
		if code != exitOK || stderr != "" {
			t.Errorf("sframe-gen %s --help: exit %d, stderr %q", name, code, stderr)
		}
		if name != "" {
			if viaHelp, _, _ := runCLI("help", name); viaHelp != stdout {
				t.Errorf("sframe-gen help %s differs from sframe-gen %s --help", name, name)
			}
		}
		synopsis := strings.TrimSpace("sframe-gen " + name)
		// Usage, description and flags, in paragraphs.
		parts := strings.SplitN(stdout, "\n\n", 3)
		if !strings.HasPrefix(parts[0], "Usage: "+synopsis+" ") {
			t.Errorf("sframe-gen %s --help does not start with \"Usage: %s\":\n%s", name, synopsis, stdout)
		}
		if len(parts) < 3 || strings.HasPrefix(parts[1], "Flags:") {
			t.Errorf("sframe-gen %s --help has no description:\n%s", name, stdout)
		}
		if m := helpLine.FindStringSubmatch(stdout); m == nil || m[1] != helpText {
			t.Errorf("sframe-gen %s --help: -h, --help not described as %q:\n%s", name, helpText, stdout)
		}
		for _, path := range []string{"docs/", ".md", "testdata", "cmd/"} {
			if strings.Contains(stdout, path) {
				t.Errorf("sframe-gen %s --help names a file of the source tree (%q):\n%s", name, path, stdout)
			}
		}
		if name == "" {
			continue
		}
		if !regexp.MustCompile(`(?m)^\.B ` + name + `$`).Match(man) {
			t.Errorf("docs/sframe-gen.1: no %q entry under COMMANDS", name)
		}
		if !bytes.Contains(man, []byte(".B sframe-gen "+name+"\n")) {
			t.Errorf("docs/sframe-gen.1: %q not in the synopsis", name)
		}
		if !regexp.MustCompile(`(?m)^  ` + name + ` +\S`).MatchString(topHelp) {
			t.Errorf("sframe-gen --help does not list the command %s", name)
		}
	}
	if !bytes.Contains(man, []byte("Print this help and exit")) {
		t.Errorf("docs/sframe-gen.1: -h/--help not described as %q", helpText)
	}
	// A page referred to as NAME(1) that is a command make install
	// installs must be installed too.
	installed := regexp.MustCompile(`(?s)INSTALLED := (.*?[^\\])\n`).FindSubmatch(makefile)
	if installed == nil {
		t.Fatal("Makefile: no INSTALLED list")
	}
	files := strings.Fields(strings.ReplaceAll(string(installed[1]), "\\\n", " "))
	for _, m := range regexp.MustCompile(`(?m)^\.BR? (\S+) \((\d)\)`).FindAllSubmatch(man, -1) {
		page, section := string(m[1]), string(m[2])
		if !slices.Contains(files, "bin/"+page) {
			continue
		}
		if want := "share/man/man" + section + "/" + page + "." + section; !slices.Contains(files, want) {
			t.Errorf("docs/sframe-gen.1 refers to %s(%s), which make install does not install (%s)", page, section, want)
		}
	}
}
