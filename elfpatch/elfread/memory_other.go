//go:build !linux

package elfread

// systemMemory is 0 (unknown) elsewhere than on linux.
func systemMemory() int64 { return 0 }
