package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDamageCheckerFails makes sure TestDamage's checks can fail: each
// stand-in for the CLI breaks one rule, and checkDamaged must say so.
func TestDamageCheckerFails(t *testing.T) {
	input, err := os.ReadFile(filepath.Join(testdataDir(), "link/x86_64/relocatable.o"))
	if err != nil {
		t.Fatal(err)
	}
	// good behaves: writes -o OUT, leaves everything else alone.
	good := func(c *cli, args []string) int {
		for i, a := range args[:len(args)-1] {
			if a == "-o" {
				os.WriteFile(args[i+1], input, 0o644)
			}
		}
		if len(args) == 3 && args[0] == "dump" {
			fmt.Fprintln(c.stdout, "{}")
		}
		return exitOK
	}
	file := func(args []string) string { return args[len(args)-1] }
	var sink [][]byte
	for _, tc := range []struct {
		name string
		main func(c *cli, args []string) int
		want string // in one of the problems; "" for none
	}{
		{"good", good, ""},
		{"entry diagnostics then error", func(c *cli, args []string) int {
			fmt.Fprintf(c.stderr, "sframe-gen: %s: .eh_frame: offset 0x14: bad\n", file(args))
			fmt.Fprintf(c.stderr, "sframe-gen: %s: nothing written\n", file(args))
			return exitFailure
		}, ""},
		{"panic", func(c *cli, args []string) int { panic("boom") }, "panic: boom"},
		{"exit 2", func(c *cli, args []string) int {
			fmt.Fprintf(c.stderr, "sframe-gen: %s: bad\n", file(args))
			return exitUsage
		}, "exit 2"},
		{"exit 3", func(c *cli, args []string) int { return 3 }, "exit 3"},
		{"silent failure", func(c *cli, args []string) int { return exitFailure }, "want lines ending in a newline"},
		{"two error lines", func(c *cli, args []string) int {
			fmt.Fprintf(c.stderr, "sframe-gen: %s: one\nsframe-gen: %s: two\n", file(args), file(args))
			return exitFailure
		}, "want one error line"},
		{"no file name", func(c *cli, args []string) int {
			fmt.Fprintf(c.stderr, "sframe-gen: bad\n")
			return exitFailure
		}, "does not read"},
		{"bare EOF", func(c *cli, args []string) int {
			if len(args) == 1 || args[0] != "dump" && args[0] != "rows" && args[0] != "verify" && args[0] != "stats" {
				fmt.Fprintf(c.stderr, "sframe-gen: %s: unexpected EOF\n", file(args))
				return exitFailure
			}
			return good(c, args)
		}, "does not say what is wrong"},
		{"stack trace", func(c *cli, args []string) int {
			fmt.Fprintf(c.stderr, "sframe-gen: %s: goroutine 1 [running]: main.go:12\n", file(args))
			return exitFailure
		}, `output contains "goroutine "`},
		{"input changed", func(c *cli, args []string) int {
			os.WriteFile(file(args), []byte("x"), 0o644)
			fmt.Fprintf(c.stderr, "sframe-gen: %s: bad\n", file(args))
			return exitFailure
		}, "input file changed"},
		{"temp file left", func(c *cli, args []string) int {
			f := file(args)
			os.WriteFile(filepath.Join(filepath.Dir(f), "."+filepath.Base(f)+".sframe-gen-123"), nil, 0o644)
			fmt.Fprintf(c.stderr, "sframe-gen: %s: bad\n", f)
			return exitFailure
		}, "temporary files left"},
		{"mode lost", func(c *cli, args []string) int {
			if len(args) == 1 {
				os.Chmod(args[0], 0o644)
			}
			return good(c, args)
		}, "mode not kept"},
		{"huge allocation", func(c *cli, args []string) int {
			sink = append(sink, make([]byte, 100<<20))
			return good(c, args)
		}, "allocated"},
		{"rows prints no JSON", func(c *cli, args []string) int {
			if args[0] == "rows" {
				fmt.Fprintln(c.stdout, "{broken")
			}
			return good(c, args)
		}, "not JSON"},
		{"hang", func(c *cli, args []string) int { time.Sleep(2 * time.Second); return 0 }, "hang"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st damageStats
			rn := runner{main: tc.main, timeout: 10 * time.Second}
			if tc.name == "hang" {
				rn.timeout = 200 * time.Millisecond
			}
			problems, hung, err := checkDamaged(rn, t.TempDir(), input, &st)
			sink = nil
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(problems, "\n")
			if tc.want == "" {
				if len(problems) > 0 || hung {
					t.Errorf("problems for a well-behaved stand-in:\n%s", all)
				}
				return
			}
			if !strings.Contains(all, tc.want) {
				t.Errorf("want a problem containing %q, got:\n%s", tc.want, all)
			}
			if tc.name == "hang" && !hung {
				t.Errorf("hang not reported as hung")
			}
		})
	}
}
