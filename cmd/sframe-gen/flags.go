package main

import (
	"errors"

	"github.com/spf13/pflag"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/cfi"
)

// shareFlags adds --share-fres and --no-share-fres to fs. The returned
// function gives, once fs is parsed, the sharing asked for: by default
// shared blocks except where GNU's bytes are asked for (gas) or the file
// is big-endian; --share-fres insists (an error where refused),
// --share-fres=false and --no-share-fres write one block per function.
func shareFlags(fs *pflag.FlagSet) func(gas bool) (sframegen.Sharing, error) {
	// Its value counts only when given: the default depends on the
	// other flags and the file, which the usage says (false keeps pflag
	// from printing "(default true)" after it).
	share := fs.Bool("share-fres", false, "write each distinct block of FRE data once, shared by the functions that repeat it (the default, but not with --gas-compat nor for big-endian files)")
	noShare := fs.Bool("no-share-fres", false, "write one block of FRE data per function (as GNU does)")
	return func(gas bool) (sframegen.Sharing, error) {
		switch {
		case fs.Changed("no-share-fres") && *noShare && fs.Changed("share-fres") && *share:
			return 0, errors.New("--share-fres and --no-share-fres contradict each other")
		case fs.Changed("no-share-fres") && *noShare, fs.Changed("share-fres") && !*share:
			return sframegen.ShareNever, nil
		case fs.Changed("share-fres") && gas:
			return 0, errors.New("--gas-compat and --share-fres exclude each other: GNU as and ld never share FRE data")
		case fs.Changed("share-fres"):
			return sframegen.ShareAlways, nil
		}
		return sframegen.ShareDefault, nil
	}
}

// mergeFlag adds --merge-fdes[=adjacent|padding] to fs. The returned
// function gives, once fs is parsed, the merging asked for: none by
// default; --merge-fdes (padding) merges runs of functions whose FREs are
// the same single row, across alignment padding, --merge-fdes=adjacent
// only where they touch, --merge-fdes=all also functions of several rows
// (lower.MergeAll). --gas-compat excludes it (GNU's bytes).
func mergeFlag(fs *pflag.FlagSet) func(gas bool) (sframegen.MergeFDEs, error) {
	merge := fs.String("merge-fdes", "", "write one FDE for a run of adjacent functions whose FREs are the same single row (`HOW`: padding, across alignment padding, the default; adjacent, only where they touch; all, also functions of several rows whose FRE data no other function shares): fewer FDEs than functions, each address keeping its row")
	fs.Lookup("merge-fdes").NoOptDefVal = "padding"
	return func(gas bool) (sframegen.MergeFDEs, error) {
		var m sframegen.MergeFDEs
		switch *merge {
		case "":
			return sframegen.MergeNone, nil
		case "padding":
			m = sframegen.MergePadding
		case "adjacent":
			m = sframegen.MergeAdjacent
		case "all":
			m = sframegen.MergeAll
		default:
			return 0, errors.New("--merge-fdes: " + *merge + ": padding, adjacent or all")
		}
		if gas {
			return 0, errors.New("--gas-compat and --merge-fdes exclude each other: GNU as and ld write an FDE per function")
		}
		return m, nil
	}
}

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
