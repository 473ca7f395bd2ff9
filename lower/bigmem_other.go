//go:build !linux

package lower

import "unsafe"

// adviseHuge does nothing where madvise(MADV_HUGEPAGE) is not known.
func adviseHuge(p unsafe.Pointer, n uintptr) {}
