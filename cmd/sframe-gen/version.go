package main

import (
	"fmt"

	"github.com/spf13/pflag"

	sframegen "github.com/sframe-gen/sframe-gen"
)

// sframeVersion is the SFrame version generate writes: 3, or 2 in one of
// binutils' two layouts.
type sframeVersion struct {
	version uint8 // 0 (3) or 2
	layout  sframegen.V2Layout
}

// v2 reports whether version 2 is written.
func (v sframeVersion) v2() bool { return v.version == 2 }

// sframeVersionFlags adds --sframe-version and --v2-layout to fs; the
// returned function checks and gives them once fs is parsed.
func sframeVersionFlags(fs *pflag.FlagSet) func() (sframeVersion, error) {
	version := fs.Int("sframe-version", 3, "SFrame `VERSION` to write: 3, or 2 for the readers of binutils 2.41-2.45 (see --v2-layout)")
	layout := fs.String("v2-layout", "2.45", "with --sframe-version 2: the layout of binutils `RELEASE` 2.45 (FDE_FUNC_START_PCREL, what the 2025 kernel unwinder reads) or 2.44 (what Debian 13's binutils read)")
	return func() (sframeVersion, error) {
		var v sframeVersion
		switch *version {
		case 3:
		case 2:
			v.version = 2
		default:
			return v, fmt.Errorf("--sframe-version %d: 2 or 3", *version)
		}
		switch *layout {
		case "2.45":
			v.layout = sframegen.V2PCRel
		case "2.44":
			v.layout = sframegen.V2Binutils244
		default:
			return v, fmt.Errorf("--v2-layout %q: 2.45 or 2.44", *layout)
		}
		if fs.Changed("v2-layout") && !v.v2() {
			return v, fmt.Errorf("--v2-layout goes with --sframe-version 2")
		}
		return v, nil
	}
}
