package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// nativeCore runs a patched program of testdata/stack, stops it with
// SIGABRT and returns its core, the program and its patched libraries.
func nativeCore(t testing.TB, prog stackProgram) (core, bin, libdir string) {
	t.Helper()
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("needs an x86-64 Linux host")
	}
	sysfiles.NeedProgram(t, "gcc")
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if p := strings.TrimSpace(string(pattern)); strings.ContainsAny(p, "|/%") {
		sysfiles.NeedInput(t, "core_pattern %q is not a plain file name: as root, echo core > /proc/sys/kernel/core_pattern", p)
	}
	raiseCoreLimit(t)
	abi := stackABIs()[0]
	dir := t.TempDir()
	libdir = patchedLibs(t, abi, dir)
	bin = buildStackProgram(t, abi, prog, dir, libdir)
	cores := stopProgram(t, abi, stackRun{bin: bin}, filepath.Join(dir, "stops"), 1)
	return cores[0], bin, libdir
}

// TestStackCommand runs sframe-gen stack on a core: the text (one line per
// frame as gdb prints it, the end), --json, --sysroot, and the errors.
func TestStackCommand(t *testing.T) {
	core, bin, libdir := nativeCore(t, stackPrograms[0])
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		c := &cli{stdout: &out, stderr: &errb}
		code := c.main(append([]string{"stack"}, args...))
		return out.String(), errb.String(), code
	}

	out, errs, code := run(core)
	frame := regexp.MustCompile(`^#\d+ +0x[0-9a-f]{16} (\S+) \((.+)\)$`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 4 || !strings.HasPrefix(lines[0], "TID ") {
		t.Fatalf("exit %d, stderr %q, output:\n%s", code, errs, out)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if !frame.MatchString(l) {
			t.Errorf("frame line %q is not #N 0xPC function+off (module)", l)
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "end: outermost frame") {
		t.Errorf("last line %q, want the walk's end", lines[len(lines)-1])
	}
	if !strings.Contains(out, "rec+0x") && !strings.Contains(out, "main+0x") {
		t.Errorf("no frame of the program's functions:\n%s", out)
	}

	js, _, code := run("--json", core)
	var res stackResult
	if err := json.Unmarshal([]byte(js), &res); err != nil || code != 0 || len(res.Threads) != 1 || !res.Threads[0].End.Complete {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, js)
	}

	// Another build of a program, its build ID another.
	other := buildStackProgram(t, stackABIs()[0], stackPrograms[1], t.TempDir(), libdir)

	// --sysroot: the files moved under a directory, as a cross-built
	// program's core is read on another machine.
	sysroot := t.TempDir()
	for _, p := range []string{bin, libdir} {
		dst := filepath.Join(sysroot, p)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Rename(p, dst); err != nil {
			t.Fatal(err)
		}
	}
	moved, _, _ := run(core)
	if strings.Contains(moved, "end: outermost frame") || !strings.Contains(moved, "module has no .sframe") || !strings.Contains(moved, "no such file") {
		t.Errorf("without --sysroot, the moved files were found:\n%s", moved)
	}
	withRoot, _, code := run("--sysroot", sysroot, core)
	if code != 0 || strings.Count(withRoot, "\n") != strings.Count(out, "\n") || !strings.Contains(withRoot, "end: outermost frame") {
		t.Errorf("--sysroot: exit %d:\n%s\nwant the frames of\n%s", code, withRoot, out)
	}
	// Another build at the program's place: its SFrame is not used (the
	// core holds the program's first page, with its build ID).
	inRoot := filepath.Join(sysroot, bin)
	if err := os.Rename(inRoot, inRoot+".saved"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(other); err != nil || os.WriteFile(inRoot, data, 0o755) != nil {
		t.Fatal(err)
	}
	wrong, _, _ := run("--sysroot", sysroot, core)
	if strings.Contains(wrong, "end: outermost frame") || !strings.Contains(wrong, "module has no .sframe") || !strings.Contains(wrong, "not the file the process ran: build ID ") {
		t.Errorf("--sysroot with another build of the program: the walk used it:\n%s", wrong)
	}
	if err := os.Rename(inRoot+".saved", inRoot); err != nil {
		t.Fatal(err)
	}

	// A core cut short in its notes.
	data, err := os.ReadFile(core)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.core")
	ef, err := elf.Open(core)
	if err != nil {
		t.Fatal(err)
	}
	noteEnd := 0
	for _, p := range ef.Progs {
		if p.Type == elf.PT_NOTE {
			noteEnd = int(p.Off + p.Filesz)
		}
	}
	ef.Close()
	os.WriteFile(cut, data[:noteEnd-16], 0o644)
	cutHeaders := filepath.Join(t.TempDir(), "headers.core")
	os.WriteFile(cutHeaders, data[:100], 0o644)

	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{filepath.Join(sysroot, bin)}, "not a core file", 1},
		{[]string{"stack_test.go"}, "stack_test.go: not an ELF file", 1},
		{[]string{"/nonexistent/core"}, "no such file", 1},
		{[]string{cut}, "cut.core: PT_NOTE at offset", 1},
		{[]string{cutHeaders}, "headers.core: program header table (offset 0x40, ", 1},
		{[]string{}, "expected exactly one CORE", 2},
		{[]string{"--pid", "1", core}, "expected exactly one CORE", 2},
	} {
		_, errs, code := run(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("stack %q: exit %d, stderr %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// FuzzCoreNotes reads arbitrary PT_NOTE contents as a core's notes, for
// every ABI: an error or a process, never a panic.
func FuzzCoreNotes(f *testing.F) {
	f.Add(uint8(0), []byte("\x05\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00CORE\x00\x00\x00\x00"))
	f.Add(uint8(3), []byte("\x00\x00\x00\x05\x00\x00\x00\x30FILECORE\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		abis := []emit.ABI{emit.ABIAMD64LittleEndian, emit.ABIAArch64LittleEndian, emit.ABIAArch64BigEndian, emit.ABIS390XBigEndian}
		abi := abis[int(which)%len(abis)]
		p := &process{ABI: abi, Auxv: map[uint64]uint64{}}
		p.readNotes(data, abi.ByteOrder())
	})
}

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
		m := &stackModule{Path: "lib.so", Start: start, Bias: bias, SFrame: &emit.Reader{}, buildID: mine, buildIDAddr: noteAt - bias}
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
		m := &stackModule{Path: "lib.so", Start: 0x1000, SFrame: &emit.Reader{}, buildID: note, buildIDAddr: 0x8000}
		checkBuildID(m, mem, order)
		if m.SFrame == nil && (bytes.Contains(page, note) && bytes.HasPrefix(page, []byte(elf.ELFMAG)) || bytes.HasPrefix(at, note)) {
			t.Fatalf("own note present, SFrame dropped: %v", m.NoSFrame)
		}
	})
}
