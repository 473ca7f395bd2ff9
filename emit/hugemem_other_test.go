//go:build !linux

package emit

// hugeBytes returns nil: huge pages are asked for on Linux only.
func hugeBytes(n int) []byte { return nil }

// cpuTime returns 0: the process's CPU time is read on Linux only.
func cpuTime() int64 { return 0 }
