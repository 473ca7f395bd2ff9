package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
)

// fileCost is what generate is charged for one file (memoryBudget): an
// estimate of the most it holds at once, and what that is, for the
// message when it is over the budget.
type fileCost struct {
	bytes int64
	what  string
}

// cfiBytes is the memory f's CFI section takes once read (inflated when
// compressed); 0 when it cannot be read, which reading it then reports.
func cfiBytes(f *elf.File, src cfi.Source) int64 {
	n, err := cfi.SectionBytes(f, src)
	if err != nil || n > cfi.MaxSectionBytes {
		return 0
	}
	return int64(n)
}

// linkedCost is the charge of an executable or shared library: its CFI
// lowered (the file itself is mapped or copied file to file).
func linkedCost(f *elf.File, src cfi.Source) fileCost {
	n := cfiBytes(f, src)
	return fileCost{lowerFactor * n, fmt.Sprintf("%s of CFI to lower", formatSize(n))}
}

// objectCost is the charge of a relocatable object of size bytes: read
// whole, patched in memory, its CFI lowered. An object over
// elfpatch.MaxObjectSize is refused (in both forms, before it is read).
func objectCost(f *elf.File, size int64, src cfi.Source) (fileCost, error) {
	if size > elfpatch.MaxObjectSize {
		return fileCost{}, fmt.Errorf("an object of %s is not patched: objects are rewritten in memory, up to %s", formatSize(size), formatSize(elfpatch.MaxObjectSize))
	}
	n := cfiBytes(f, src)
	what := fmt.Sprintf("an object of %s is read whole", formatSize(size))
	if n > size {
		what += fmt.Sprintf(", its CFI inflated to %s", formatSize(n))
	}
	return fileCost{objectFactor*size + lowerFactor*n, what}, nil
}

// archiveCost is the charge of a static archive of size bytes: read whole
// and rebuilt in memory, its largest member's CFI lowered. Only the member
// headers and the members' ELF headers are read to find it.
func archiveCost(r io.ReaderAt, size int64, src cfi.Source) fileCost {
	var most int64
	forEachMember(r, size, func(m *io.SectionReader) {
		var magic [4]byte
		if n, _ := m.ReadAt(magic[:], 0); n < 4 || string(magic[:]) != elf.ELFMAG {
			return
		}
		if f, err := elf.NewFile(m); err == nil {
			most = max(most, cfiBytes(f, src))
		}
	})
	what := fmt.Sprintf("an archive of %s is read whole", formatSize(size))
	if most > size {
		what += fmt.Sprintf(", a member's CFI inflated to %s", formatSize(most))
	}
	return fileCost{archiveFactor*size + lowerFactor*most, what}
}

// forEachMember calls fn with each member of the archive r (size bytes)
// whose header can be read, reading only the 60-byte headers: a member
// cut short or a header that does not parse ends the walk (patching the
// archive reports it).
func forEachMember(r io.ReaderAt, size int64, fn func(*io.SectionReader)) {
	var h [60]byte
	for off := int64(len(elfpatch.ArchiveMagic)); off+int64(len(h)) <= size; {
		if _, err := r.ReadAt(h[:], off); err != nil || h[58] != '`' || h[59] != '\n' {
			return
		}
		n, err := strconv.ParseInt(strings.TrimRight(string(h[48:58]), " "), 10, 64)
		start := off + int64(len(h))
		if err != nil || n < 0 || n > size-start {
			return
		}
		data, dn := start, n
		if name := string(bytes.TrimRight(h[:16], " ")); strings.HasPrefix(name, "#1/") {
			if k, err := strconv.ParseInt(name[3:], 10, 64); err == nil && k >= 0 && k <= n {
				data, dn = start+k, n-k // a BSD long name before the data
			}
		}
		fn(io.NewSectionReader(r, data, dn))
		off = start + n + n&1
	}
}

// checkCFIMemory is the budget of the commands that read CFI without a
// --memory-limit (rows, stats, verify): the default one, which a file's
// CFI, read (inflated) and evaluated, must fit.
func checkCFIMemory(f *elf.File, src cfi.Source) error {
	cost := linkedCost(f, src)
	return newMemoryBudget(defaultMemoryLimit()).acquire(cost.bytes, cost.what)
}
