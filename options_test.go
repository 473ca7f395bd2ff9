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
		{"gas-compat and sharing", x86, Options{GasCompat: true, Share: ShareAlways},
			"GasCompat reproduces GNU's bytes, and GNU never shares FRE blocks"},
		{"big-endian sharing", lower.Target{Arch: lower.S390X, BigEndian: true}, Options{Share: ShareAlways},
			"the file is big-endian (s390x), and GNU libsframe on a little-endian host (cross ld, objdump) cannot read FRE data shared in a big-endian section; generate it without sharing"},
		{"version", x86, Options{Version: 4}, "SFrame version 4: 2 or 3"},
	} {
		if _, err := LowerOptions(tc.target, tc.opt); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		target lower.Target
		opt    Options
		share  bool
	}{
		{x86, Options{}, true},
		{x86, Options{GasCompat: true}, false},
		{x86, Options{Share: ShareAlways}, true},
		{x86, Options{Share: ShareNever}, false},
		{lower.Target{Arch: lower.S390X, BigEndian: true}, Options{}, false},
	} {
		lo, err := LowerOptions(tc.target, tc.opt)
		if err != nil || lo.ShareFREs != tc.share {
			t.Errorf("%+v on %v: sharing %v, %v; want %v", tc.opt, tc.target, lo.ShareFREs, err, tc.share)
		}
	}
}
