package cfi

import (
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// The tests find the system's files through testdata/sysfiles: by asking
// the tools that use them, not at fixed paths. A file that cannot be found
// skips the test, saying why, except under CI=true (.ci/run installs
// everything), where it fails.

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

// bigLib returns the biggest libLLVM of the system (sysfiles.BigLib), or
// "" when it has none, saying so. CI does not install LLVM.
func bigLib(t testing.TB) string {
	t.Helper()
	lib := sysfiles.BigLib()
	if lib == "" {
		t.Log("no libLLVM in ldconfig -p: the big-library case is not run")
	}
	return lib
}
