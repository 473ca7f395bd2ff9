package sframegen

import (
	"runtime"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/lower"
)

// TestOptionsContradictions: options that contradict each other, or name
// nothing, are refused, not quietly given a meaning.
func TestOptionsContradictions(t *testing.T) {
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
		{"layout", x86, Options{V2Layout: lower.V2Binutils244}, "a version 2 layout goes with version 2"},
		{"arch", x86, Options{Arch: "mips"}, `unknown architecture "mips" (want x86_64, aarch64, aarch64_be or s390x)`},
	} {
		if _, err := lowerOptions(tc.target, tc.opt); err == nil || err.Error() != tc.want {
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
		lo, err := lowerOptions(tc.target, tc.opt)
		if err != nil || lo.ShareFREs != tc.share {
			t.Errorf("%+v on %v: sharing %v, %v; want %v", tc.opt, tc.target, lo.ShareFREs, err, tc.share)
		}
	}
}

// lowerOptions is the lower.Options a Generator made with opt lowers
// target's files with.
func lowerOptions(target lower.Target, opt Options) (lower.Options, error) {
	g, err := NewGenerator(opt, Resources{})
	if err != nil {
		return lower.Options{}, err
	}
	return g.lowerOptions(target)
}

// TestTune checks the scheduling of lowering chosen from the CFI's size:
// every CPU for a big section, one worker held while a copy of the file is being made (when there are
// two or more), nothing for a small section.
func TestTune(t *testing.T) {
	copying := make(chan struct{})
	for _, tc := range []struct {
		name    string
		cfi     int
		hold    <-chan struct{}
		procs   int
		workers int
		held    bool
	}{
		{"big", parallelCFIBytes, nil, 2, 2, false},
		{"big, copied meanwhile", parallelCFIBytes, copying, 2, 2, true},
		{"big, copied meanwhile, one CPU", parallelCFIBytes, copying, 1, 1, false},
		{"small", parallelCFIBytes - 1, copying, 2, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
			var lo lower.Options
			tune(&lo, tc.cfi, tc.hold)
			if lo.Workers != tc.workers || (lo.Hold != nil) != tc.held {
				t.Errorf("Workers %d, held %v; want %d, %v", lo.Workers, lo.Hold != nil, tc.workers, tc.held)
			}
		})
	}
}

// TestStrictErrorSummary checks the counts a *StrictError says, one
// function or entry in the singular.
func TestStrictErrorSummary(t *testing.T) {
	for _, tc := range []struct {
		skipped, entries int
		want             string
	}{
		{2, 0, "2 functions and 0 CFI entries could not be represented"},
		{1, 1, "1 function and 1 CFI entry could not be represented"},
		{0, 3, "0 functions and 3 CFI entries could not be represented"},
	} {
		e := &StrictError{Skipped: make([]lower.Skip, tc.skipped), EntryErrors: make([]*cfi.EntryError, tc.entries)}
		if got := e.Summary(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
