package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// cfiSourceFlags adds --eh-frame and --debug-frame to fs (verb says what the
// command does with the section: "read", "compare with"). The returned
// function gives the chosen source once fs is parsed.
func cfiSourceFlags(fs *pflag.FlagSet, verb string) func() (cfi.Source, error) {
	eh := fs.Bool("eh-frame", false, verb+" .eh_frame (default when present)")
	dbg := fs.Bool("debug-frame", false, verb+" .debug_frame")
	return func() (cfi.Source, error) {
		switch {
		case *eh && *dbg:
			return cfi.Auto, errors.New("--eh-frame and --debug-frame exclude each other")
		case *eh:
			return cfi.EHFrame, nil
		case *dbg:
			return cfi.DebugFrame, nil
		}
		return cfi.Auto, nil
	}
}
