package lower

import (
	"syscall"
	"unsafe"
)

// adviseHuge advises the n bytes at p (whole huge pages) as huge pages
// (madvise MADV_HUGEPAGE). It is a hint: an error (a kernel without
// transparent huge pages) changes nothing.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	_ = syscall.Madvise(unsafe.Slice((*byte)(p), n), madvHugePage)
}

// madvHugePage is MADV_HUGEPAGE (not in package syscall).
const madvHugePage = 14
