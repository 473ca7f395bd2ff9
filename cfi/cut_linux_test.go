package cfi

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
)

// TestCutTableFault checks that a fault in CutWeighted's second walk (the
// mapped file cut short meanwhile) does not crash the process: the first
// walk goes on alone and faults where its caller handles faults.
func TestCutTableFault(t *testing.T) {
	src, err := os.Open("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
	if err != nil {
		t.Skip(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "lib.so")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	st, err := dst.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, err := syscall.Mmap(int(dst.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(data)
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := OpenMapped(ef, EHFrame, data)
	if err != nil || len(fr.table) == 0 {
		t.Fatalf("no table: %v", err)
	}
	// The file cut in the second half of the section: a page boundary
	// past the middle entry.
	sec := ef.Section(".eh_frame")
	_, bounds := fr.bounds([]int{1, 1})
	mid, _ := fr.entryNear(bounds[1])
	page := uint64(os.Getpagesize())
	cut := (sec.Offset + uint64(mid) + page) &^ (page - 1)
	if cut >= sec.Offset+sec.Size {
		t.Fatalf("the section's second half (%#x) is within a page", sec.Size-uint64(mid))
	}
	if err := dst.Truncate(int64(cut)); err != nil {
		t.Fatal(err)
	}
	faulted := func() (fault bool) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				_, fault = r.(interface{ Addr() uintptr })
			}
		}()
		fr.cutWeighted([]int{1, 1}, 0)
		return false
	}()
	if !faulted {
		t.Error("no fault reading a section cut short")
	}
}
