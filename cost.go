package sframegen

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// Cost is the memory generating for one file is estimated to hold at
// its peak, measured on real files (docs/robustness.md): lowering holds
// up to lowerFactor times the CFI section's bytes (the section itself,
// read or inflated, included); an object is read whole and written from
// memory (objectFactor times its size); an archive is read whole, each
// changed member kept and the new archive built in memory
// (archiveFactor). A caller that bounds the memory of the files it
// processes at once admits each file's Cost first (Resources.Admit).
type Cost struct {
	Bytes int64
	// What says what makes the cost up, for a message when it is too
	// much.
	What string
	// CFIBytes is the size of the file's CFI section.
	CFIBytes int64
}

// Parallel reports whether the file's CFI is lowered on every CPU: a big
// section (the goroutines cost about what they save on a small one),
// whose lowering holds the most memory at once.
func (c Cost) Parallel() bool { return c.CFIBytes >= parallelCFIBytes }

// Per-file peak factors (Cost).
const (
	lowerFactor   = 8
	objectFactor  = 3
	archiveFactor = 4
)

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
// lowered (the file itself is mapped or copied file to file), and its
// section headers as elfpatch reads and writes them (patchHeaderBytes).
func linkedCost(f *elf.File, src cfi.Source) Cost {
	n := cfiBytes(f, src)
	what := fmt.Sprintf("%s of CFI to lower", elfread.FormatSize(n))
	if h := patchHeaderBytes(f); h > lowerFactor*n {
		what = fmt.Sprintf("%d section headers to patch, %s", len(f.Sections), what)
	}
	return Cost{lowerFactor*n + patchHeaderBytes(f), what, n}
}

// patchHeaderBytes is the memory elfpatch takes for the section headers
// of f beside debug/elf's: each read (64 bytes) and decoded (64), the
// table written (64) and its extent in the layout (32). Measured: a
// linked file of 800,000 sections (the extended count) took 315 MiB to
// patch, 210 MiB of them charged for debug/elf's headers.
func patchHeaderBytes(f *elf.File) int64 { return int64(len(f.Sections)) * 224 }

// objectCost is the charge of a relocatable object of size bytes: read
// whole, patched in memory, its CFI lowered. An object over
// elfpatch.MaxObjectSize is refused (in both forms, before it is read).
func objectCost(f *elf.File, size int64, src cfi.Source) (Cost, error) {
	if size > elfpatch.MaxObjectSize {
		return Cost{}, fmt.Errorf("an object of %s is not patched: objects are rewritten in memory, up to %s", elfread.FormatSize(size), elfread.FormatSize(elfpatch.MaxObjectSize))
	}
	n := cfiBytes(f, src)
	what := fmt.Sprintf("an object of %s is read whole", elfread.FormatSize(size))
	if n > size {
		what += fmt.Sprintf(", its CFI inflated to %s", elfread.FormatSize(n))
	}
	return Cost{objectFactor*size + lowerFactor*n + patchHeaderBytes(f), what, n}, nil
}

// archiveCost is the charge of a static archive of size bytes: read whole
// and rebuilt in memory, its largest member's CFI lowered, and the
// headers of its largest member read (each member's read while the
// archive is rebuilt). Only the member headers and the members' ELF
// headers are read to find them, one member at a time, each member's
// headers admitted (admit) before they are read and given back after.
func archiveCost(r io.ReaderAt, size int64, src cfi.Source, admit func(Cost) (func(), error)) (Cost, error) {
	var most, headers int64
	var err error
	forEachMember(r, size, func(m *io.SectionReader) bool {
		var magic [4]byte
		if n, _ := m.ReadAt(magic[:], 0); n < 4 || string(magic[:]) != elf.ELFMAG {
			return true
		}
		var held int64
		var releases []func()
		f, ferr := readELF(m, m.Size(), func(c Cost) error {
			release, aerr := admit(c)
			if aerr != nil {
				err = aerr
				return aerr
			}
			held += c.Bytes
			releases = append(releases, release)
			return nil
		})
		for _, release := range releases {
			release()
		}
		if err != nil {
			return false
		}
		headers = max(headers, held)
		if ferr == nil {
			most = max(most, cfiBytes(f, src))
		}
		return true
	})
	if err != nil {
		return Cost{}, err
	}
	what := fmt.Sprintf("an archive of %s is read whole", elfread.FormatSize(size))
	if most > size {
		what += fmt.Sprintf(", a member's CFI inflated to %s", elfread.FormatSize(most))
	}
	return Cost{archiveFactor*size + lowerFactor*most + headers, what, most}, nil
}

// forEachMember calls fn with each member of the archive r (size bytes)
// whose header can be read, reading only the 60-byte headers: a member
// cut short or a header that does not parse ends the walk (patching the
// archive reports it).
func forEachMember(r io.ReaderAt, size int64, fn func(*io.SectionReader) bool) {
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
		if !fn(io.NewSectionReader(r, data, dn)) {
			return
		}
		off = start + n + n&1
	}
}
