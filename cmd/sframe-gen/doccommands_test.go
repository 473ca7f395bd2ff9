package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocCommandsName checks what the commands of README.md and docs/*.md
// (code spans and the lines of fenced blocks) name, where no test runs
// them (the docs' go test commands run the suite's own tests; make
// targets and scripts run for minutes): a go test's -run, -bench and
// -fuzz patterns each select a test, benchmark or fuzz target of the
// package it names (every alternative of a|b, up to a subtest's /), a
// make target is one of the Makefile's, a program of testdata (testdata/X
// or go run ./testdata/X) is there. So a renamed test, target or script
// fails here instead of leaving a recipe that runs nothing.
func TestDocCommandsName(t *testing.T) {
	root := filepath.Join(testdataDir(), "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	makefile := string(readFile(t, filepath.Join(root, "Makefile")))
	checked := 0
	for _, path := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		name, _ := filepath.Rel(root, path)
		doc := readDoc(t, root, name)
		cmds := docCodeSpans(doc)
		for _, b := range docFencedBlocks(doc) {
			if b.lang != "go" && b.lang != "json" {
				cmds = append(cmds, strings.Split(b.text, "\n")...)
			}
		}
		for _, cmd := range cmds {
			if why := docCommandsNotChecked[strings.TrimSpace(cmd)]; why != "" {
				continue
			}
			for _, part := range regexp.MustCompile(`&&|;| \| `).Split(stripComment(cmd), -1) {
				if why := docCommandNames(root, makefile, strings.Fields(part)); why != "" {
					t.Errorf("%s: `%s`: %s", name, strings.TrimSpace(cmd), why)
				} else if looksChecked(part) {
					checked++
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d names checked: the extraction is broken", checked)
	}
	t.Logf("%d names checked (tests, targets, programs)", checked)
}

// docCommandsNotChecked are commands of the docs that name what is not
// this tree's, with the reason.
var docCommandsNotChecked = map[string]string{
	"make install-strip": "autotools' target, in the user's project (docs/integration.md)",
	"make -q":            "make's question mode, in the user's project (docs/integration.md)",
}

// stripComment drops a shell comment (# after a space) from a line.
func stripComment(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		return line[:i]
	}
	return line
}

// looksChecked reports whether docCommandNames checks something in part.
func looksChecked(part string) bool {
	f := strings.Fields(part)
	f = dropPrefix(f)
	return len(f) > 1 && (f[0] == "go" && (f[1] == "test" || f[1] == "run") || f[0] == "make") ||
		len(f) > 0 && strings.HasPrefix(f[0], "testdata/")
}

// dropPrefix drops variable assignments, nice and $ (a prompt) before a
// command.
func dropPrefix(f []string) []string {
	for len(f) > 0 && (regexp.MustCompile(`^[A-Z_]+=`).MatchString(f[0]) || f[0] == "nice" || f[0] == "$") {
		f = f[1:]
	}
	return f
}

// docCommandNames says what the command f names that does not exist, or "".
func docCommandNames(root, makefile string, f []string) string {
	f = dropPrefix(f)
	switch {
	case len(f) > 1 && f[0] == "make":
		for _, target := range f[1:] {
			if strings.HasPrefix(target, "-") || strings.Contains(target, "=") {
				continue
			}
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).MatchString(makefile) {
				return "no make target " + target
			}
		}
	case len(f) > 2 && f[0] == "go" && f[1] == "run" && strings.HasPrefix(f[2], "./testdata/"):
		if _, err := os.Stat(filepath.Join(root, f[2])); err != nil {
			return err.Error()
		}
	case len(f) > 0 && strings.HasPrefix(f[0], "testdata/") && !strings.HasSuffix(f[0], ":") && !regexp.MustCompile(`[*<]|/[A-Z]+(/|$)`).MatchString(f[0]):
		if _, err := os.Stat(filepath.Join(root, f[0])); err != nil {
			return err.Error()
		}
	case len(f) > 1 && f[0] == "go" && f[1] == "test":
		return goTestNames(root, f[2:])
	}
	return ""
}

// goTestNames checks the -run, -bench and -fuzz patterns of go test's
// arguments args against the package's functions.
func goTestNames(root string, args []string) string {
	pkg := ""
	patterns := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-run" || a == "-bench" || a == "-fuzz") && i+1 < len(args):
			patterns[a] = strings.Trim(args[i+1], "'\"")
			i++
		case strings.HasPrefix(a, "./") || a == ".":
			pkg = a
		case strings.HasPrefix(a, "-"):
			if a == "-timeout" || a == "-count" || a == "-benchtime" || a == "-fuzztime" || a == "-parallel" || a == "-fuzzminimizetime" || a == "-o" || a == "-cpuprofile" {
				i++
			}
		}
	}
	if len(patterns) == 0 {
		return ""
	}
	if pkg == "" {
		return "no package named: which package's tests?"
	}
	files, _ := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
	if len(files) == 0 {
		return "no tests in " + pkg
	}
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err.Error()
		}
		src.Write(b)
	}
	kinds := map[string]string{"-run": "(?:Test|Example)", "-bench": "Benchmark", "-fuzz": "Fuzz"}
	for flag, pattern := range patterns {
		if pattern == "^$" || pattern == "XXX" { // no test: the benchmarks alone
			continue
		}
		for _, alt := range strings.Split(pattern, "|") {
			alt, _, _ = strings.Cut(alt, "/")
			top, err := regexp.Compile(alt)
			if err != nil {
				return flag + " " + pattern + ": " + err.Error()
			}
			found := false
			for _, m := range regexp.MustCompile(`(?m)^func (`+kinds[flag]+`\w*)\(`).FindAllStringSubmatch(src.String(), -1) {
				if top.MatchString(m[1]) {
					found = true
					break
				}
			}
			if !found {
				return flag + " " + alt + ": no such function in " + pkg
			}
		}
	}
	return ""
}
