package emit

import (
	"syscall"
	"unsafe"
)

// hugeBytes returns n zero bytes in memory advised as huge pages (as
// lower allocates its big lists for a single file's run), or nil.
func hugeBytes(n int) []byte {
	const huge = 2 << 20
	room := (n + huge - 1) &^ (huge - 1)
	m, err := syscall.Mmap(-1, 0, room+huge, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	k := int(((start + huge - 1) &^ (huge - 1)) - start)
	m = m[k : k+room]
	_ = syscall.Madvise(m, 14) // MADV_HUGEPAGE
	return m[:n]
}

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
