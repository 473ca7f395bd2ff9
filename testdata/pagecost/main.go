// Command pagecost measures what a fresh 4 KiB page costs on this machine:
// 32 MiB of anonymous memory, huge pages refused (MADV_NOHUGEPAGE),
// touched one byte a page; the best of 9 runs. testdata/bench.sh prints
// it beside its figures (docs/performance.md: a run that faults in fresh
// memory costs more where a page costs more).
package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	const size = 32 << 20
	const page = 4096
	best := time.Duration(1<<63 - 1)
	for range 9 {
		b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pagecost:", err)
			os.Exit(1)
		}
		if err := unix.Madvise(b, unix.MADV_NOHUGEPAGE); err != nil {
			fmt.Fprintln(os.Stderr, "pagecost: madvise:", err)
			os.Exit(1)
		}
		start := time.Now()
		for i := 0; i < size; i += page {
			b[i] = 1
		}
		best = min(best, time.Since(start))
		unix.Munmap(b)
	}
	fmt.Printf("a fresh 4 KiB page: %.2f us (32 MiB touched page by page in %.1f ms, best of 9)\n",
		float64(best.Nanoseconds())/1e3/(size/page), float64(best.Nanoseconds())/1e6)
}
