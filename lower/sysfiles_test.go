package lower

import (
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// The tests find the system's libraries through testdata/sysfiles: by
// asking the tools that use them, not at fixed paths. A library that
// cannot be found skips the test, saying why, except under CI=true
// (.ci/run installs everything), where it fails.

// needInput skips t (fails it under CI=true) because an input is missing.
func needInput(t testing.TB, format string, args ...any) {
	t.Helper()
	sysfiles.NeedInput(t, format, args...)
}

// compilerLib is sysfiles.CompilerLib.
func compilerLib(t testing.TB, cc, name string) string {
	t.Helper()
	return sysfiles.CompilerLib(t, cc, name)
}

// pathProgram is sysfiles.PathProgram.
func pathProgram(t testing.TB, name string) string {
	t.Helper()
	return sysfiles.PathProgram(t, name)
}

// hostLibs returns the host's libc and libstdc++, as gcc links them.
func hostLibs(t testing.TB) (libc, libstdcxx string) {
	t.Helper()
	return compilerLib(t, "gcc", "libc.so.6"), compilerLib(t, "gcc", "libstdc++.so.6")
}

// ldconfigLibs is sysfiles.LdconfigLibs.
func ldconfigLibs(prefix string) []string { return sysfiles.LdconfigLibs(prefix) }

// bigLib returns the biggest libLLVM of the system (sysfiles.BigLib), or
// "" when it has none, saying so.
func bigLib(t testing.TB) string {
	t.Helper()
	lib := sysfiles.BigLib()
	if lib == "" {
		t.Log("no libLLVM in ldconfig -p: the big-library case is not run")
	}
	return lib
}
