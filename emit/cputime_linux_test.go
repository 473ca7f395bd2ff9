package emit

import "syscall"

// cpuTime returns the CPU time (user and system) the process has used,
// in nanoseconds, or 0: a benchmark's measure where other work shares the
// machine's CPUs.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
