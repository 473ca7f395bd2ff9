// Command testreport runs go test -json with the arguments it is given
// (make test: testreport -short -count=1 ./...) and prints what a person
// reading a test run needs: a line per package as go test prints it, every
// skipped test with the reason it gave, the whole output of every failed
// test, and at the end one line "N passed, N failed, N skipped" (tests and
// subtests). Its exit status is 1 when go test fails or a test failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test -json args, reports to stdout, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testreport: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testreport: go test: %v\n", err)
		return 1
	}
	r := newReport(stdout)
	readErr := r.read(events)
	waitErr := cmd.Wait()
	r.summary()
	switch {
	case readErr != nil:
		fmt.Fprintf(stderr, "testreport: reading go test's output: %v\n", readErr)
		return 1
	case waitErr != nil || r.failed > 0 || r.packagesFailed > 0:
		return 1
	}
	return 0
}

// event is one line of go test -json (cmd/test2json's TestEvent, with the
// build events of go test -json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// report accumulates each running test's output until it ends.
type report struct {
	w                       io.Writer
	output                  map[string][]string // by package and test
	passed, failed, skipped int
	packagesFailed          int
}

// newReport returns a report that prints to w.
func newReport(w io.Writer) *report {
	return &report{w: w, output: map[string][]string{}}
}

// read reads events until the end of the stream. A line that is not an
// event (go test prints some errors that way) is printed as it is.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(r.w, "%s\n", line)
			continue
		}
		r.handle(e)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	r.unfinished()
	return nil
}

// handle takes one event.
func (r *report) handle(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "output":
		r.output[key] = append(r.output[key], e.Output)
	case "build-output":
		fmt.Fprint(r.w, e.Output)
	case "build-fail":
		r.packagesFailed++
	case "pass", "skip", "fail":
		if e.Test == "" {
			r.packageEnd(e, key)
		} else {
			r.testEnd(e, key)
		}
	}
}

// testEnd counts a test that ended and prints what it must.
func (r *report) testEnd(e event, key string) {
	out := r.output[key]
	delete(r.output, key)
	switch e.Action {
	case "pass":
		r.passed++
	case "skip":
		r.skipped++
		fmt.Fprintf(r.w, "SKIP  %s %s: %s\n", e.Package, e.Test, skipReason(out))
	case "fail":
		r.failed++
		fmt.Fprintf(r.w, "--- FAIL: %s %s (%.2fs)\n", e.Package, e.Test, e.Elapsed)
		for _, l := range out {
			if !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(strings.TrimSpace(l), "--- ") {
				fmt.Fprint(r.w, l)
			}
		}
	}
}

// packageEnd prints a package's line as go test does, and its own output
// (a panic, a timeout, a build failure) when it failed.
func (r *report) packageEnd(e event, key string) {
	out := r.output[key]
	delete(r.output, key)
	switch e.Action {
	case "pass":
		fmt.Fprintf(r.w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
	case "skip":
		fmt.Fprintf(r.w, "?   \t%s\t[no test files]\n", e.Package)
	case "fail":
		r.packagesFailed++
		for _, l := range out {
			if l != "FAIL\n" && !strings.HasPrefix(l, "FAIL\t") {
				fmt.Fprint(r.w, l)
			}
		}
		fmt.Fprintf(r.w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
}

// unfinished prints the output of tests that never ended (their package
// failed first: a panic elsewhere, a timeout).
func (r *report) unfinished() {
	var keys []string
	for k, out := range r.output {
		if len(out) > 0 && !strings.HasSuffix(k, "\x00") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		pkg, test, _ := strings.Cut(k, "\x00")
		fmt.Fprintf(r.w, "--- UNFINISHED: %s %s\n", pkg, test)
		for _, l := range r.output[k] {
			fmt.Fprint(r.w, l)
		}
	}
}

// summary prints the closing line.
func (r *report) summary() {
	fmt.Fprintf(r.w, "%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped)
}

// skipReason is the message a skipped test gave: its last line of output
// other than go test's own ("=== RUN", "--- SKIP"), without the
// "file_test.go:12: " prefix that t.Skip adds.
func skipReason(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		l := strings.TrimSpace(out[i])
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if file, msg, ok := strings.Cut(l, ": "); ok && strings.Contains(file, ".go:") && !strings.Contains(file, " ") {
			return msg
		}
		return l
	}
	return "(no reason given)"
}
