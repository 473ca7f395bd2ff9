//go:build linux

package sframegen

import (
	"io"
	"os"
	"syscall"
)

// mapFile maps the size bytes of r read-only when r is an *os.File, for
// reading its CFI section without copying it (cfi.OpenMapped). It returns
// nil when it cannot (another reader, an empty or huge file, a file system
// without mmap): the caller reads instead. unmap removes the mapping.
func mapFile(r io.ReaderAt, size int64) (data []byte, unmap func()) {
	f, ok := r.(*os.File)
	if !ok || size <= 0 || size != int64(int(size)) {
		return nil, nil
	}
	conn, err := f.SyscallConn() // unlike Fd, keeps the descriptor's mode
	if err != nil {
		return nil, nil
	}
	var merr error
	if err := conn.Control(func(fd uintptr) {
		data, merr = syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	}); err != nil || merr != nil {
		return nil, nil
	}
	return data, func() { syscall.Munmap(data) }
}
