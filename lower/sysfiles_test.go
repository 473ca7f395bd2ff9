package lower

import (
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// The tests find the system's libraries through testdata/sysfiles: by
// asking the tools that use them, not at fixed paths. A library that
// cannot be found skips the test, saying why, except under CI=true
// (.ci/run installs everything), where it fails.

// hostLibs returns the host's libc and libstdc++, as gcc links them.
func hostLibs(t testing.TB) (libc, libstdcxx string) {
	t.Helper()
	return sysfiles.CompilerLib(t, "gcc", "libc.so.6"), sysfiles.CompilerLib(t, "gcc", "libstdc++.so.6")
}
