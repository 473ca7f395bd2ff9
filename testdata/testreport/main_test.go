package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReport runs testreport on a module of its own whose tests pass, skip
// (with and without a reason, in a subtest too) and fail: every skip is
// printed with its reason, the failure with its output, and the closing
// line counts them; the exit status is 1.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example\n\ngo 1.22\n",
		"a_test.go": `package example

import "testing"

func TestPass(t *testing.T) {}

func TestSkipReason(t *testing.T) { t.Log("looking for cmake"); t.Skip("cmake not found") }

func TestSkipBare(t *testing.T) { t.SkipNow() }

func TestSub(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("skips", func(t *testing.T) { t.Skipf("%s missing", "qemu-s390x") })
}

func TestFail(t *testing.T) { t.Log("the detail"); t.Error("it broke") }
`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("GOFLAGS", "")
	var out, errOut bytes.Buffer
	code := run([]string{"-count=1", "./..."}, &out, &errOut)
	text := out.String()
	if code != 1 {
		t.Errorf("exit status %d, want 1 (a test failed)\n%s%s", code, text, errOut.String())
	}
	for _, want := range []string{
		"SKIP  example TestSkipReason: cmake not found\n",
		"SKIP  example TestSkipBare: (no reason given)\n",
		"SKIP  example TestSub/skips: qemu-s390x missing\n",
		"--- FAIL: example TestFail",
		"the detail\n",
		"it broke\n",
		"FAIL\texample\t",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the report:\n%s", want, text)
		}
	}
	// Passed: TestPass, TestSub, TestSub/ok; failed: TestFail; skipped: 3.
	if want := "3 passed, 1 failed, 3 skipped\n"; !strings.HasSuffix(text, want) {
		t.Errorf("the report does not end with %q:\n%s", want, text)
	}
}

// TestReportPassing: a passing run exits 0 and prints go test's package line.
func TestReportPassing(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"go.mod":    "module example\n\ngo 1.22\n",
		"a_test.go": "package example\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("GOFLAGS", "")
	var out, errOut bytes.Buffer
	if code := run([]string{"-count=1", "./..."}, &out, &errOut); code != 0 {
		t.Errorf("exit status %d, want 0\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "ok  \texample\t") || !strings.HasSuffix(out.String(), "1 passed, 0 failed, 0 skipped\n") {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestReportBuildFailure: a package that does not compile fails the run
// and its compiler errors are shown.
func TestReportBuildFailure(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"go.mod":    "module example\n\ngo 1.22\n",
		"a_test.go": "package example\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) { undefinedName() }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("GOFLAGS", "")
	var out, errOut bytes.Buffer
	if code := run([]string{"-count=1", "./..."}, &out, &errOut); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if all := out.String() + errOut.String(); !strings.Contains(all, "undefinedName") {
		t.Errorf("the compiler's error is not shown:\n%s", all)
	}
}
