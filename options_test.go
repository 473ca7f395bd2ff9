package sframegen

import (
	"testing"

	"github.com/sframe-gen/sframe-gen/lower"
)

// TestLowerOptionsContradictions: options that contradict each other are
// refused, not quietly given a meaning.
func TestLowerOptionsContradictions(t *testing.T) {
	x86 := lower.Target{Arch: lower.AMD64}
	for _, tc := range []struct {
		name   string
		target lower.Target
		opt    Options
		want   string
	}{
		{"gas-compat and sharing", x86, Options{GasCompat: true, ShareFREs: true},
			"GasCompat and ShareFREs exclude each other: GNU as and ld never share FRE data"},
		{"version", x86, Options{Version: 4}, "SFrame version 4: 2 or 3"},
	} {
		if _, err := LowerOptions(tc.target, tc.opt); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, opt := range []Options{{GasCompat: true}, {ShareFREs: true}} {
		if _, err := LowerOptions(x86, opt); err != nil {
			t.Errorf("%+v: %v", opt, err)
		}
	}
}
