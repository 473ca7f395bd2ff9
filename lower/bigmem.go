package lower

import "unsafe"

// hugePage is the size of the pages makeBig asks the kernel for.
const hugePage = 2 << 20

// makeBig returns make([]T, n, c), for a list that lowering fills at once
// in one run of the CLI, and with huge (Options.HugePages), where the
// system lets a program ask (Linux with transparent huge pages in madvise
// mode), advises its memory as huge pages, so that filling it costs one page fault (and one zeroing, in one
// go) per 2 MiB rather than one per 4 KiB. On this project's 2-CPU virtual
// machine a fresh 4 KiB page costs 1.5-5 us: 24 MiB touched page by page
// took 9.7 ms (median of 20 runs), advised 2.1 ms (docs/performance.md,
// round 7). A list of at least bigList bytes whose element size divides
// 2 MiB starts on a huge page (the allocation has room to move it there;
// the room is never touched); of another, only the whole huge pages inside
// it are advised.
func makeBig[T any](n, c int, huge bool) []T {
	var zero T
	elem := unsafe.Sizeof(zero)
	size := uintptr(c) * elem
	if !huge || size < bigList || elem == 0 || uintptr(c) > (^uintptr(0)>>2+1)/elem {
		return make([]T, n, c)
	}
	if hugePage%elem == 0 {
		room := (size + hugePage - 1) &^ (hugePage - 1)
		all := make([]T, (room+hugePage)/elem)
		start := uintptr(unsafe.Pointer(unsafe.SliceData(all)))
		k := (((start + hugePage - 1) &^ (hugePage - 1)) - start) / elem
		s := all[k : int(k)+n : int(k)+c]
		adviseHuge(unsafe.Pointer(unsafe.SliceData(all[k:])), room)
		return s
	}
	s := make([]T, n, c)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	from := (start + hugePage - 1) &^ (hugePage - 1)
	to := (start + size) &^ (hugePage - 1)
	if to > from {
		adviseHuge(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), from-start), to-from)
	}
	return s
}

// bigList is the size from which makeBig advises huge pages: a huge page
// costs about what 64 small ones do.
const bigList = 256 << 10
