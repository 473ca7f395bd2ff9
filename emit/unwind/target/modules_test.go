package target

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestMappedFile checks which file the walk reads for a mapping: under
// --sysroot first, then the very file mapped (--pid's map_files), then
// the path (a core's mappings, which have no map_files), unless the file
// was deleted or replaced since it was mapped; a live process's mapping
// that map_files cannot give is never read by its path.
func TestMappedFile(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib.so")
	mapped := filepath.Join(dir, "map_files-entry")
	root := filepath.Join(dir, "root")
	for _, p := range []string{lib, mapped, filepath.Join(root, lib)} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "gone")
	for _, c := range []struct {
		name, sysroot string
		m             mapping
		want, err     string
	}{
		{"path", "", mapping{Path: lib}, lib, ""},
		{"sysroot first", root, mapping{Path: lib, File: mapped}, filepath.Join(root, lib), ""},
		{"the mapped file", "", mapping{Path: lib, File: mapped}, mapped, ""},
		{"the mapped file of a deleted one", "", mapping{Path: lib + deletedSuffix, File: mapped}, mapped, ""},
		{"no mapped file: never the path", "", mapping{Path: lib, File: missing}, "", "the file mapped at 0x0 cannot be read through " + missing + " (unmapped meanwhile?); its path is not read instead"},
		{"deleted, no mapped file", "", mapping{Path: lib + deletedSuffix, File: missing}, "", lib + " was deleted or replaced after the process mapped it, and the file it maps cannot be read through " + missing},
		{"deleted, in a core", "", mapping{Path: lib + deletedSuffix}, "", lib + " was deleted or replaced after the process mapped it: the file the process ran is gone"},
	} {
		got, err := mappedFile(c.sysroot, c.m)
		switch {
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// regionMem is process memory of a few regions, for checkBuildID.
type regionMem map[uint64][]byte

func (r regionMem) ReadAt(p []byte, off int64) (int, error) {
	for base, b := range r {
		if a := uint64(off); a >= base && a+uint64(len(p)) <= base+uint64(len(b)) {
			return copy(p, b[a-base:]), nil
		}
	}
	return 0, io.EOF
}

// TestCheckBuildID checks when a module's file is taken for another than
// the one the process ran: another build ID in its first page or where
// its note is mapped; not when either holds its own note, nor when the
// memory holds no build ID (a core without those pages).
func TestCheckBuildID(t *testing.T) {
	le := binary.LittleEndian
	note := func(id string) []byte {
		b := le.AppendUint32(nil, 4)
		b = le.AppendUint32(b, uint32(len(id)))
		b = le.AppendUint32(b, gnuBuildID)
		return append(append(b, "GNU\x00"...), id...)
	}
	page := func(at int, n []byte) []byte {
		p := make([]byte, 4096)
		copy(p, elf.ELFMAG)
		copy(p[at:], n)
		return p
	}
	const start, bias, noteAt = 0x400000, 0x10000, 0x412000 // the note mapped at noteAt
	mine, theirs := note("\x01\x02\x03\x04"), note("\x09\x09\x09\x09")
	for _, c := range []struct {
		name  string
		mem   regionMem
		other bool
	}{
		{"own note in the first page", regionMem{start: page(0x340, mine)}, false},
		{"own note where it is mapped", regionMem{start: page(0, nil), noteAt: mine}, false},
		{"own note moved, the old in the first page", regionMem{start: page(0x340, mine), noteAt: page(0, nil)}, false},
		{"another ID in the first page", regionMem{start: page(0x340, theirs)}, true},
		{"another ID where the note is mapped", regionMem{start: page(0, nil), noteAt: theirs}, true},
		{"no build ID in the memory", regionMem{start: page(0, nil)}, false},
		{"nothing of the file in the memory", regionMem{}, false},
	} {
		m := &Module{Path: "lib.so", Start: start, Bias: bias, SFrame: &emit.Reader{}, buildID: mine, buildIDAddr: noteAt - bias}
		checkBuildID(m, c.mem, le)
		switch {
		case c.other && (m.SFrame != nil || m.NoSFrame == nil || !strings.Contains(m.NoSFrame.Error(), "build ID 09090909 in the process's memory, 01020304 in lib.so")):
			t.Errorf("%s: SFrame kept (%v)", c.name, m.NoSFrame)
		case !c.other && m.SFrame == nil:
			t.Errorf("%s: SFrame dropped: %v", c.name, m.NoSFrame)
		}
	}
}

// FuzzCheckBuildID reads arbitrary memory as a module's first page and
// note: never a panic, and a module whose own note is in either is kept.
func FuzzCheckBuildID(f *testing.F) {
	f.Add([]byte("\x7fELF\x04\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00GNU\x00\x09\x09\x09\x09"), []byte{}, false)
	f.Add([]byte("\x7fELF"), []byte("\x04\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00GNU\x00\x01\x02\x03\x04"), true)
	f.Fuzz(func(t *testing.T, first, at []byte, bigEndian bool) {
		var order binary.ByteOrder = binary.LittleEndian
		if bigEndian {
			order = binary.BigEndian
		}
		note := make([]byte, 12, 24)
		order.PutUint32(note, 4)
		order.PutUint32(note[4:], 4)
		order.PutUint32(note[8:], gnuBuildID)
		note = append(note, "GNU\x00\x01\x02\x03\x04"...)
		page := make([]byte, 4096)
		copy(page, first)
		mem := regionMem{0x1000: page, 0x8000: at}
		m := &Module{Path: "lib.so", Start: 0x1000, SFrame: &emit.Reader{}, buildID: note, buildIDAddr: 0x8000}
		checkBuildID(m, mem, order)
		if m.SFrame == nil && (bytes.Contains(page, note) && bytes.HasPrefix(page, []byte(elf.ELFMAG)) || bytes.HasPrefix(at, note)) {
			t.Fatalf("own note present, SFrame dropped: %v", m.NoSFrame)
		}
	})
}
