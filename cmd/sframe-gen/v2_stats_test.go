package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStatsV2Loss checks the dry run's count of the functions version 2
// leaves out against what generate --sframe-version 2 writes and reports.
func TestStatsV2Loss(t *testing.T) {
	td := testdataDir()
	for _, c := range []struct {
		file string
		lost int
	}{
		{"gas/x86_64/flex.o", 6},
		{"gas/x86_64/drap.o", 1},
		{"gas/x86_64/signal.o", 3},
		{"gas/s390x/fpra.o", 0},
		{"link/x86_64/lazy.so", 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			in := filepath.Join(td, c.file)
			st := statsOf(t, in)
			sum := 0
			for _, k := range st.V2LostReasons {
				sum += k.Functions
				if !strings.HasPrefix(k.Reason, "SFrame version 2 cannot express it: ") {
					t.Errorf("reason %q", k.Reason)
				}
			}
			if st.V2Lost != c.lost || sum != st.V2Lost {
				t.Errorf("v2 loses %d functions (%d by reason), want %d", st.V2Lost, sum, c.lost)
			}
			out := filepath.Join(t.TempDir(), "out")
			_, stderr, code := runCLI("--sframe-version", "2", "-v", "-o", out, in)
			if code != exitOK {
				t.Fatalf("generate: %d: %s", code, stderr)
			}
			if n := strings.Count(stderr, ": no SFrame FDE: SFrame version 2 cannot express it: "); n != c.lost {
				t.Errorf("generate -v reports %d functions version 2 cannot express, stats %d:\n%s", n, c.lost, stderr)
			}
			v2 := statsOf(t, out)
			v3 := statsOf(t, "--dry-run", in)
			if v2.Version != 2 || v2.CoveredFunctions != v3.CoveredFunctions-c.lost {
				t.Errorf("version %d section covers %d functions; version 3 %d, less %d lost", v2.Version, v2.CoveredFunctions, v3.CoveredFunctions, c.lost)
			}
		})
	}
}
