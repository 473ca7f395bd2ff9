// Command pagecost measures what a fresh 4 KiB page costs on this machine:
// 32 MiB of anonymous memory, huge pages refused (MADV_NOHUGEPAGE),
// touched one byte a page; the best of 9 runs, and the first (on a virtual
// machine that hands freed memory back to its host, the cost of memory
// the host must back again when nothing was freed just before; the runs
// after it reuse what the one before freed). testdata/bench.sh prints it
// beside its figures (docs/performance.md: a run that faults in fresh
// memory costs more where a page costs more). With -huge, the memory is
// advised as huge pages (MADV_HUGEPAGE) and it says what a fresh 2 MiB
// page costs in the first run and at best.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	huge := flag.Bool("huge", false, "advise the memory as huge pages and say what a fresh 2 MiB page costs, in the first run and at best")
	flag.Parse()
	const size = 32 << 20
	page, advice := 4096, unix.MADV_NOHUGEPAGE
	if *huge {
		page, advice = 2<<20, unix.MADV_HUGEPAGE
	}
	var first time.Duration
	best := time.Duration(1<<63 - 1)
	for run := range 9 {
		// A huge page's room past the end, to align the start to one.
		m, err := unix.Mmap(-1, 0, size+2<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pagecost:", err)
			os.Exit(1)
		}
		off := 0
		for uintptr(unsafe.Pointer(&m[off]))%(2<<20) != 0 {
			off += 4096
		}
		b := m[off : off+size]
		if err := unix.Madvise(b, advice); err != nil {
			fmt.Fprintln(os.Stderr, "pagecost: madvise:", err)
			os.Exit(1)
		}
		start := time.Now()
		for i := 0; i < size; i += 4096 {
			b[i] = 1
		}
		d := time.Since(start)
		if run == 0 {
			first = d
		}
		best = min(best, d)
		unix.Munmap(m)
	}
	if *huge {
		fmt.Printf("a fresh 2 MiB page: %.2f ms in the first run, %.2f ms at best (32 MiB advised as huge pages, touched, 9 runs)\n",
			float64(first.Nanoseconds())/1e6/float64(size/page), float64(best.Nanoseconds())/1e6/float64(size/page))
		return
	}
	fmt.Printf("a fresh 4 KiB page: %.2f us (32 MiB touched page by page in %.1f ms, best of 9; %.2f us in the first run)\n",
		float64(best.Nanoseconds())/1e3/float64(size/page), float64(best.Nanoseconds())/1e6,
		float64(first.Nanoseconds())/1e3/float64(size/page))
}
