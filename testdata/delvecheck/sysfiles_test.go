package delvecheck

import (
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// The test finds the system's files by asking the tools that use them,
// not at fixed paths: $PATH holds the programs, gcc says where it links a
// library from (gcc -print-file-name=libstdc++.so.6). A file that cannot
// be found skips the test, saying why, except under CI=true (.ci/run
// installs everything), where it fails.

// needInput skips t (fails it under CI=true) because an input is missing.
func needInput(t testing.TB, format string, args ...any) {
	t.Helper()
	sysfiles.NeedInput(t, format, args...)
}

// pathProgram is sysfiles.PathProgram.
func pathProgram(t testing.TB, name string) string {
	t.Helper()
	return sysfiles.PathProgram(t, name)
}

// gccLib is the library name as gcc links it (sysfiles.CompilerLib).
func gccLib(t testing.TB, name string) string {
	t.Helper()
	return sysfiles.CompilerLib(t, "gcc", name)
}
