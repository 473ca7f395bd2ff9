package lower

import "unsafe"

// hugePage is the size of the pages makeBig asks the kernel for.
const hugePage = 2 << 20

// makeBig returns make([]T, n, c), for a list that lowering fills at once
// in one run of the CLI: where the system lets a program ask (Linux with
// transparent huge pages in madvise mode), the whole 2 MiB pages of it are
// advised as huge pages, so that filling it costs one page fault (and one
// zeroing, in one go) per 2 MiB rather than one per 4 KiB. On this
// project's 2-CPU virtual machine a fresh 4 KiB page costs 1.5-5 us; 24 MiB
// touched page by page took 9.7 ms (median of 20 runs), advised 2.1 ms
// (docs/performance.md, round 7). Only whole huge pages inside the list
// are advised: one under 2 MiB is left as it is.
func makeBig[T any](n, c int) []T {
	s := make([]T, n, c)
	var zero T
	size := uintptr(c) * unsafe.Sizeof(zero)
	if size < hugePage {
		return s
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	from := (start + hugePage - 1) &^ (hugePage - 1)
	to := (start + size) &^ (hugePage - 1)
	if to > from {
		adviseHuge(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), from-start), to-from)
	}
	return s
}
